/**
 * Request validation with zod, reported in FastAPI's 422 shape. The same zod schemas feed the
 * OpenAPI document (fastify-type-provider-zod's transform), so docs and checks cannot drift apart.
 */
import type { FastifyInstance, FastifySchemaCompiler } from 'fastify';
import { z } from 'zod';
import { RequestValidationError, zodIssuesToItems, type Location } from './errors.js';

const partToLocation: Record<string, Location> = { body: 'body', querystring: 'query', params: 'path', headers: 'header' };

const validatorCompiler: FastifySchemaCompiler<z.ZodType> = ({ schema, httpPart }) => (data) => {
  const result = schema.safeParse(data);
  if (result.success) return { value: result.data };
  const where = partToLocation[httpPart ?? 'body'] ?? 'body';
  return { error: new RequestValidationError(zodIssuesToItems(where, result.error.issues, data)) };
};

export function registerValidation(app: FastifyInstance): void {
  app.setValidatorCompiler(validatorCompiler);
  // Responses are plain JSON; their schemas exist for the OpenAPI document only.
  app.setSerializerCompiler(() => (data) => JSON.stringify(data));
  // Schema errors reach the error handler unwrapped.
  app.setSchemaErrorFormatter((errors) => errors[0] as unknown as Error);
}

/** A path id: digits only, as an integer (FastAPI's int_parsing error otherwise). */
export const pathInt = z.coerce.number().int().min(1).max(2_147_483_647);
