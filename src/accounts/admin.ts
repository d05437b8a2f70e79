/**
 * Operator commands (`npx presence accounts …`, `keys create`, `faces add`). The same functions run inside the
 * server (reached through the loopback admin endpoint while it owns the embedded database) or in
 * the CLI process itself when no server holds DATA_DIR or when the database is PostgreSQL.
 */
import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import { PERMISSIONS, type Permission } from '../core/auth.js';
import { safeEqual } from '../core/secrets.js';
import { type AccountStore, decimalToCents } from './accounts.js';
import { AVATAR_ID_PATTERN, DEFAULT_FACE_MAX_BYTES, type CustomFaces } from '../catalog/custom-faces.js';
import { isLoopback } from '../core/net.js';
import path from 'node:path';
import type { Config } from '../core/config.js';
import { accountsErrors } from './errors.js';

/** Where a running server tells the operator CLI how to reach it (embedded database only). */
export const adminFile = (config: Config) => path.join(config.dataDir, 'admin.json');

const plan = z.enum(['free', 'paid']);

export const adminCommands = {
  'accounts.create': z.object({ name: z.string().min(1), plan, balance: z.string().optional() }).strict(),
  'accounts.set': z.object({ id: z.number().int(), plan: plan.optional(), balance: z.string().optional() }).strict(),
  'keys.create': z.object({ account: z.number().int(), permissions: z.array(z.enum(PERMISSIONS)).min(1) }).strict(),
  // Without `account`: the first account (the one the first start made).
  'console.link': z
    .object({
      account: z.number().int().optional(),
      ttl: z
        .number()
        .int()
        .min(1)
        .max(7 * 24 * 3600)
        .optional(),
    })
    .strict(),
  // The file travels base64-encoded in the JSON body; without `account` the face is global.
  'faces.add': z
    .object({
      file_base64: z.string().min(1),
      name: z.string().trim().min(1).max(100),
      gender: z.enum(['f', 'm']),
      id: z.string().regex(AVATAR_ID_PATTERN, `must match ${AVATAR_ID_PATTERN.source}`).optional(),
      description: z.string().max(500).optional(),
      default_voice_id: z.string().optional(),
      account: z.number().int().optional(),
    })
    .strict(),
};
export type AdminCommand = keyof typeof adminCommands;

/** Makes console sign-in links (the console's `ConsoleSignIns`, passed in: the console sits above accounts). */
export interface ConsoleLinks {
  createLink(accountId: number, ttlSeconds?: number): Promise<unknown>;
}

export async function runAdminCommand(store: AccountStore, command: string, args: unknown, faces?: CustomFaces, signIns?: ConsoleLinks): Promise<unknown> {
  const schema = adminCommands[command as AdminCommand];
  if (!schema) throw accountsErrors.unknown_command(`unknown admin command "${command}"`);
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw accountsErrors.invalid_arguments(parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  const a = parsed.data as any;
  switch (command as AdminCommand) {
    case 'accounts.create':
      return store.create({ name: a.name, plan: a.plan, balanceCents: a.balance === undefined ? 0 : decimalToCents(a.balance) });
    case 'accounts.set':
      return store.update(a.id, { plan: a.plan, balanceCents: a.balance === undefined ? undefined : decimalToCents(a.balance) });
    case 'keys.create': {
      // The contract fixes what `keys create` prints: the key, its permissions and its account.
      const { key, permissions, account_id } = await store.createKey(a.account, a.permissions as Permission[]);
      return { key, permissions, account_id };
    }
    case 'console.link': {
      if (!signIns) throw accountsErrors.unavailable('console links are not available here');
      const accountId = a.account ?? (await store.firstAccountId());
      if (accountId === undefined)
        throw accountsErrors.account_not_found('there is no account yet: start the server once (npm start) or run "presence accounts create"');
      await store.require(accountId);
      return signIns.createLink(accountId, a.ttl);
    }
    case 'faces.add': {
      if (!faces) throw accountsErrors.unavailable('custom faces are not available here');
      const face = await faces.add({
        glb: Buffer.from(a.file_base64, 'base64'),
        name: a.name,
        gender: a.gender,
        avatarId: a.id,
        description: a.description,
        defaultVoiceId: a.default_voice_id,
        accountId: a.account ?? null,
      });
      return { ...face, account_id: a.account ?? null };
    }
  }
}

/** POST /internal/admin: loopback only, and only with the token the server wrote into DATA_DIR. */
export function registerAdminEndpoint(app: FastifyInstance, store: AccountStore, adminToken: string, faces?: CustomFaces, signIns?: ConsoleLinks): void {
  // Room for `faces add`: a face file up to the limit (and a little over, so an oversized one gets
  // the validator's message), base64-encoded.
  const bodyLimit = Math.ceil((((faces?.maxBytes ?? DEFAULT_FACE_MAX_BYTES) + 1024 * 1024) * 4) / 3) + 64 * 1024;
  app.post('/internal/admin', { schema: { hide: true } as any, bodyLimit }, async (request, reply) => {
    const token = String(request.headers['x-admin-token'] ?? '');
    if (!isLoopback(request.socket.remoteAddress) || !safeEqual(token, adminToken)) {
      reply.code(404).send({ detail: 'Not Found' });
      return;
    }
    const body = request.body as { command?: string; args?: unknown } | undefined;
    return runAdminCommand(store, String(body?.command ?? ''), body?.args, faces, signIns);
  });
}
