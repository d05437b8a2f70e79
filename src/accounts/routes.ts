/** The API-key routes (contract.md "API keys"): list, create (never beyond the caller's own permissions), revoke. */
import type { FastifyInstance } from 'fastify';
import type { ZodTypeProvider } from 'fastify-type-provider-zod';
import { z } from 'zod';
import { PERMISSIONS } from '../core/auth.js';
import { DeleteQuery } from '../core/validation.js';
import type { AccountStore } from './accounts.js';
import { routeErrors } from '../core/errors.js';
import { accountsErrors } from './errors.js';

const PermissionList = z.array(z.enum(PERMISSIONS)).min(1).max(4);
const ApiKey = z
  .object({
    id: z.number().int(),
    name: z.string().nullable(),
    prefix: z.string().describe("The key's first characters (`sk_live_` and a few more), enough to tell keys apart"),
    permissions: PermissionList,
    created_at: z.string(),
    last_used_at: z.string().nullable().describe('When the key was last used (to the minute), or null'),
  })
  .meta({ id: 'ApiKey' });
const ApiKeyList = z.object({ keys: z.array(ApiKey) }).meta({ id: 'ApiKeyList' });
const CreateApiKeyRequest = z
  .object({
    name: z.string().trim().min(1).max(100).optional(),
    permissions: PermissionList.describe("A subset of the caller's own permissions"),
  })
  .meta({ id: 'CreateApiKeyRequest' });
const CreatedApiKey = ApiKey.omit({ last_used_at: true })
  .extend({
    key: z.string().describe('The secret, shown this once'),
  })
  .meta({ id: 'CreatedApiKey' });
const KeyParams = z.object({ key_id: z.coerce.number().int().min(1).max(2_147_483_647) });

export function keyRoutes(server: FastifyInstance, accounts: AccountStore): void {
  const app = server.withTypeProvider<ZodTypeProvider>();
  const tags = ['API keys'];
  app.get(
    '/v1/keys',
    {
      schema: { tags, summary: "The account's API keys (never their secrets)", response: { 200: ApiKeyList } },
    },
    async (request) => ({ keys: await accounts.listKeys(request.principal.accountId) }),
  );

  app.post(
    '/v1/keys',
    {
      config: routeErrors(accountsErrors.missing_permission),
      schema: { tags, summary: 'Create an API key: the secret is answered this once', body: CreateApiKeyRequest, response: { 201: CreatedApiKey } },
    },
    async (request, reply) => {
      const lacking = request.body.permissions.filter((p) => !request.principal.permissions.has(p));
      if (lacking.length) {
        throw accountsErrors.missing_permission(`A key cannot make a key with a permission it does not have itself: this one lacks "${lacking.join('", "')}".`);
      }
      const created = await accounts.createKey(request.principal.accountId, [...new Set(request.body.permissions)], request.body.name);
      reply.code(201);
      return { key: created.key, id: created.id, name: created.name, prefix: created.prefix, permissions: created.permissions, created_at: created.created_at };
    },
  );

  app.delete(
    '/v1/keys/:key_id',
    {
      config: routeErrors(accountsErrors.key_not_found),
      schema: { tags, summary: 'Revoke an API key: from then on it answers 401', params: KeyParams, querystring: DeleteQuery, response: { 204: z.null() } },
    },
    async (request, reply) => {
      await accounts.revokeKey(request.principal.accountId, request.params.key_id);
      return reply.code(204).send(null);
    },
  );
}
