/**
 * The operator command line (contract.md): `presence serve | accounts create | accounts set | keys create | console-link`,
 * `faces add` (bring your own face) and `faces generate` (a new face from a seed and dials, stored
 * like an uploaded one).
 * Each command prints one JSON object on stdout; errors go to stderr with a non-zero exit.
 *
 * With the embedded database, a running server owns DATA_DIR, so commands go through its
 * loopback admin endpoint; with no server running (or on PostgreSQL) they open the database here.
 */
import fs from 'node:fs';
import { parseArgs } from 'node:util';
import { loadConfig, type Config } from '../core/config.js';
import { openDatabase } from '../core/db/database.js';
import { lockHolder } from '../core/db/lock.js';
import { AccountStore } from '../accounts/accounts.js';
import { StudioCatalog } from '../catalog/catalog.js';
import { CustomFaces } from '../catalog/custom-faces.js';
import { adminFile, runAdminCommand } from '../accounts/admin.js';
import { ApiError } from '../core/errors.js';
import { adjustTo } from '../billing/ledger.js';
import { ConsoleSignIns } from '../console/signin.js';

const USAGE = `usage:
  presence serve
  presence accounts create --name NAME --plan free|paid [--balance 25.00]
  presence accounts set --id ID [--plan free|paid] [--balance 25.00]
  presence keys create --account ID --permissions read,setup,sessions,delete
  presence console-link [--account ID] [--ttl SECONDS]
  presence faces add --file PATH --name NAME --gender f|m [--id ID] [--description TEXT] [--voice KOKORO_VOICE] [--account ID]
  presence faces generate --name NAME --gender f|m [--seed N] [--age 20-75] [--build -1..1] [--skin 0..1] [--id ID] [--description TEXT] [--voice KOKORO_VOICE] [--account ID] [--out FILE.glb]`;

class UsageError extends Error {}

async function toCommand(argv: string[], config: Config): Promise<{ command: string; args: Record<string, unknown> }> {
  // `console-link` is a single word; the rest are `noun verb`.
  const [noun, verb, ...rest] = argv[0] === 'console-link' ? [argv[0], '', ...argv.slice(1)] : argv;
  const { values } = parseArgs({
    args: rest,
    options: {
      name: { type: 'string' },
      plan: { type: 'string' },
      balance: { type: 'string' },
      id: { type: 'string' },
      account: { type: 'string' },
      permissions: { type: 'string' },
      file: { type: 'string' },
      gender: { type: 'string' },
      description: { type: 'string' },
      voice: { type: 'string' },
      seed: { type: 'string' },
      age: { type: 'string' },
      build: { type: 'string' },
      skin: { type: 'string' },
      out: { type: 'string' },
      ttl: { type: 'string' },
    },
    strict: true,
  });
  const int = (flag: string, value: string | undefined) => {
    if (value === undefined || !/^\d+$/.test(value)) throw new UsageError(`--${flag} must be a whole number`);
    return Number(value);
  };
  const key = `${noun} ${verb}`;
  if (noun === 'console-link') {
    return {
      command: 'console.link',
      args: {
        ...(values.account !== undefined && { account: int('account', values.account) }),
        ...(values.ttl !== undefined && { ttl: int('ttl', values.ttl) }),
      },
    };
  }
  if (key === 'accounts create') {
    if (!values.name) throw new UsageError('--name is required');
    if (!values.plan) throw new UsageError('--plan is required (free or paid)');
    return { command: 'accounts.create', args: { name: values.name, plan: values.plan, ...(values.balance !== undefined && { balance: values.balance }) } };
  }
  if (key === 'accounts set') {
    return {
      command: 'accounts.set',
      args: { id: int('id', values.id), ...(values.plan && { plan: values.plan }), ...(values.balance !== undefined && { balance: values.balance }) },
    };
  }
  if (key === 'keys create') {
    if (!values.permissions) throw new UsageError('--permissions is required, e.g. read,setup,sessions,delete');
    return {
      command: 'keys.create',
      args: {
        account: int('account', values.account),
        permissions: values.permissions
          .split(',')
          .map((p) => p.trim())
          .filter(Boolean),
      },
    };
  }
  if (key === 'faces add') {
    if (!values.file) throw new UsageError('--file is required (a .glb or .vrm file)');
    if (!values.name) throw new UsageError('--name is required');
    if (values.gender !== 'f' && values.gender !== 'm') throw new UsageError('--gender is required (f or m)');
    return {
      command: 'faces.add',
      args: {
        file_base64: readFaceFile(values.file, config.faceMaxBytes).toString('base64'),
        name: values.name,
        gender: values.gender,
        ...(values.id !== undefined && { id: values.id }),
        ...(values.description !== undefined && { description: values.description }),
        ...(values.voice !== undefined && { default_voice_id: values.voice }),
        ...(values.account !== undefined && { account: int('account', values.account) }),
      },
    };
  }
  if (key === 'faces generate') {
    if (!values.name) throw new UsageError('--name is required');
    if (values.gender !== 'f' && values.gender !== 'm') throw new UsageError('--gender is required (f or m)');
    const { generateFace, DIAL_LIMITS } = await import('../faces/generate.js');
    const dial = (flag: 'age' | 'build' | 'skin', fallback: number) => {
      const raw = values[flag];
      if (raw === undefined) return fallback;
      const [lo, hi] = DIAL_LIMITS[flag === 'skin' ? 'skinTone' : flag];
      const v = Number(raw);
      if (raw.trim() === '' || !Number.isFinite(v) || v < lo || v > hi) throw new UsageError(`--${flag} must be a number from ${lo} to ${hi}`);
      return v;
    };
    const seed = values.seed === undefined ? Math.floor(Math.random() * 1e6) : int('seed', values.seed);
    const generated = await generateFace({ seed, gender: values.gender, age: dial('age', 35), build: dial('build', 0), skinTone: dial('skin', 0.4) });
    if (generated.glb.byteLength > config.faceMaxBytes)
      throw new Error(`The generated face is ${generated.glb.byteLength} bytes, over the ${config.faceMaxBytes}-byte limit`);
    if (values.out) fs.writeFileSync(values.out, generated.glb);
    return {
      command: 'faces.add',
      args: {
        file_base64: Buffer.from(generated.glb).toString('base64'),
        name: values.name,
        gender: values.gender,
        description: values.description ?? generated.describe,
        ...(values.id !== undefined && { id: values.id }),
        ...(values.voice !== undefined && { default_voice_id: values.voice }),
        ...(values.account !== undefined && { account: int('account', values.account) }),
      },
    };
  }
  throw new UsageError(`unknown command "${argv.join(' ')}"`);
}

/** The face file, refused here already when it is over the limit (no point sending it). */
function readFaceFile(file: string, max: number): Buffer {
  let size: number;
  try {
    size = fs.statSync(file).size;
  } catch (error) {
    throw new Error(`cannot read ${file}: ${(error as NodeJS.ErrnoException).code ?? (error as Error).message}`);
  }
  if (size > max) throw new Error(`The face file cannot be used: file is ${size} bytes, over the ${max}-byte limit`);
  return fs.readFileSync(file);
}

/** The running server's admin endpoint, when the live process holding DATA_DIR is the one that wrote admin.json. */
function runningServer(config: Config): { port: number; token: string } | undefined {
  if (config.databaseUrl) return undefined;
  const holder = lockHolder(config.dataDir);
  if (holder === undefined) return undefined;
  try {
    const admin = JSON.parse(fs.readFileSync(adminFile(config), 'utf8'));
    // A stale admin.json (left by a server that was killed) names another pid.
    return admin.pid === holder ? admin : undefined;
  } catch {
    return undefined; // the server is still starting, or not a server at all: opening DATA_DIR will say who holds it
  }
}

async function viaServer(admin: { port: number; token: string }, command: string, args: unknown): Promise<unknown> {
  const { port, token } = admin;
  const response = await fetch(`http://127.0.0.1:${port}/internal/admin`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-admin-token': token },
    body: JSON.stringify({ command, args }),
  });
  const body = (await response.json()) as any;
  if (!response.ok) throw new Error(typeof body.detail === 'object' ? body.detail.message : String(body.detail));
  return body;
}

async function locally(config: Config, command: string, args: unknown): Promise<unknown> {
  const database = await openDatabase({ databaseUrl: config.databaseUrl, dataDir: config.dataDir });
  try {
    const faces = new CustomFaces(database.db, new StudioCatalog(), { maxBytes: config.faceMaxBytes });
    return await runAdminCommand(new AccountStore(database.db, adjustTo), command, args, faces, new ConsoleSignIns(database.db, () => config.publicUrl));
  } finally {
    await database.close();
  }
}

export async function main(argv: string[]): Promise<number> {
  if (argv[0] === 'serve' || argv.length === 0) {
    try {
      // The server (the whole app) loads only for `serve`: operator commands start in a fraction of the time.
      const { serve } = await import('../server.js');
      await serve();
    } catch (error) {
      // e.g. DATA_DIR held by another server, port in use, database unreachable: one clear line.
      process.stderr.write(`presence: cannot start: ${(error as Error).message}\n`);
      return 1;
    }
    return -1; // keeps running
  }
  if (argv[0] === '--help' || argv[0] === 'help') {
    process.stdout.write(USAGE + '\n');
    return 0;
  }
  try {
    const config = loadConfig();
    const { command, args } = await toCommand(argv, config);
    const server = runningServer(config);
    const result = server ? await viaServer(server, command, args) : await locally(config, command, args);
    process.stdout.write(JSON.stringify(result) + '\n');
    return 0;
  } catch (error) {
    const message = error instanceof UsageError ? `${error.message}\n${USAGE}` : error instanceof ApiError ? error.message : (error as Error).message;
    process.stderr.write(`presence: ${message}\n`);
    return error instanceof UsageError ? 2 : 1;
  }
}
