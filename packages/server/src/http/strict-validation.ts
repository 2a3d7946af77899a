/**
 * How Fastify checks a request against its route's schema (the dashboard's bodies, path parameters, headers):
 * TypeBox's compiled check, as the /v1 routes' own parsers do (domain/generation-request.ts), in place of
 * Fastify's Ajv, which coerces types (`true` passes for a string as "true" and for a number as 1, `["production"]`
 * for "production") and silently drops unknown fields. Its errors are the /v1 ones (domain/schema-errors.ts).
 */
import type { TSchema } from '@sinclair/typebox';
import { TypeCompiler } from '@sinclair/typebox/compiler';
import type { FastifySchemaCompiler } from 'fastify';
import { ApiError } from '../domain/errors.js';
import { schemaError } from '../domain/schema-errors.js';

export const strictValidatorCompiler: FastifySchemaCompiler<TSchema> = ({ schema, httpPart }) => {
  const checker = TypeCompiler.Compile(schema);
  return (data: unknown) => {
    if (checker.Check(data)) return true;
    // A missing body comes as null; the error handler tells it from a body that is not an object.
    if (httpPart === 'body' && (typeof data !== 'object' || data === null || Array.isArray(data))) {
      return { error: new ApiError('invalid_json', 'The request body must be a JSON object.') };
    }
    return { error: schemaError(checker.Errors(data)) };
  };
};
