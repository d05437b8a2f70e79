/**
 * Operator commands (`npx presence accounts …`, `keys create`). The same functions run inside the
 * server (reached through the loopback admin endpoint while it owns the embedded database) or in
 * the CLI process itself when no server holds DATA_DIR or when the database is PostgreSQL.
 */
import { z } from 'zod';
import type { FastifyInstance } from 'fastify';
import { ApiError } from '../core/errors.js';
import { PERMISSIONS, type Permission } from '../core/auth.js';
import { safeEqual } from '../core/secrets.js';
import { AccountStore, decimalToCents } from './accounts.js';

const plan = z.enum(['free', 'paid']);

export const adminCommands = {
  'accounts.create': z.object({ name: z.string().min(1), plan, balance: z.string().optional() }).strict(),
  'accounts.set': z.object({ id: z.number().int(), plan: plan.optional(), balance: z.string().optional() }).strict(),
  'keys.create': z.object({ account: z.number().int(), permissions: z.array(z.enum(PERMISSIONS)).min(1) }).strict(),
};
export type AdminCommand = keyof typeof adminCommands;

export async function runAdminCommand(store: AccountStore, command: string, args: unknown): Promise<unknown> {
  const schema = adminCommands[command as AdminCommand];
  if (!schema) throw new ApiError(400, 'unknown_command', `unknown admin command "${command}"`);
  const parsed = schema.safeParse(args);
  if (!parsed.success) throw new ApiError(400, 'invalid_arguments', parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; '));
  const a = parsed.data as any;
  switch (command as AdminCommand) {
    case 'accounts.create':
      return store.create({ name: a.name, plan: a.plan, balanceCents: a.balance === undefined ? 0 : decimalToCents(a.balance) });
    case 'accounts.set':
      return store.update(a.id, { plan: a.plan, balanceCents: a.balance === undefined ? undefined : decimalToCents(a.balance) });
    case 'keys.create':
      return store.createKey(a.account, a.permissions as Permission[]);
  }
}

function isLoopback(address: string | undefined): boolean {
  return !!address && (address === '::1' || address.startsWith('127.') || address.startsWith('::ffff:127.'));
}

/** POST /internal/admin: loopback only, and only with the token the server wrote into DATA_DIR. */
export function registerAdminEndpoint(app: FastifyInstance, store: AccountStore, adminToken: string): void {
  app.post('/internal/admin', { schema: { hide: true } as any }, async (request, reply) => {
    const token = String(request.headers['x-admin-token'] ?? '');
    if (!isLoopback(request.socket.remoteAddress) || !safeEqual(token, adminToken)) {
      reply.code(404).send({ detail: 'Not Found' });
      return;
    }
    const body = request.body as { command?: string; args?: unknown } | undefined;
    return runAdminCommand(store, String(body?.command ?? ''), body?.args);
  });
}
