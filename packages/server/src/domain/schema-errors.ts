/**
 * What a request's value breaks in its TypeBox schema, as the API's error (docs/decisions.md#errors), naming the
 * field (`image_urls[1]`, `monthly_budget`): an unknown field is `unknown_parameter`, a missing one
 * `missing_parameter`, anything else `invalid_parameter`. Values are checked as sent: nothing is coerced.
 */
import { Kind, type TSchema } from '@sinclair/typebox';
import { type ValueError, ValueErrorType } from '@sinclair/typebox/compiler';
import { ApiError } from './errors.js';

/** `image_urls[1]` for the path `/image_urls/1`. */
function fieldOf(error: ValueError): string {
  return error.path
    .split('/')
    .filter(Boolean)
    .join('.')
    .replace(/\.(\d+)/g, '[$1]');
}

/** The errors that say a value is of another kind than its schema's, rather than out of its bounds. */
const KIND_ERRORS = new Set<ValueErrorType>([
  ValueErrorType.Array,
  ValueErrorType.Boolean,
  ValueErrorType.Integer,
  ValueErrorType.Literal,
  ValueErrorType.Null,
  ValueErrorType.Number,
  ValueErrorType.Object,
  ValueErrorType.String,
  ValueErrorType.Union,
]);

const KIND_NAMES: Record<string, string> = {
  Array: 'an array',
  Boolean: 'true or false',
  Integer: 'an integer',
  Null: 'null',
  Number: 'a number',
  Object: 'an object',
  String: 'a string',
};

function describeKind(schema: TSchema): string {
  return schema[Kind] === 'Literal' ? JSON.stringify(schema.const) : (KIND_NAMES[schema[Kind]] ?? 'valid');
}

/** A value that matches no variant of a union: the variant of its kind says what is wrong, if one is. */
function unionError(error: ValueError, param: string): ApiError {
  const variants = error.schema.anyOf as TSchema[];
  if (variants.every((variant) => variant[Kind] === 'Literal')) {
    return new ApiError(
      'invalid_parameter',
      `${param} must be one of ${variants.map((variant) => variant.const).join(', ')}.`,
      { param },
    );
  }
  for (const variant of error.errors) {
    const first = variant.First();
    if (first && !(first.path === error.path && KIND_ERRORS.has(first.type))) return toApiError(first);
  }
  return new ApiError('invalid_parameter', `${param} must be ${variants.map(describeKind).join(' or ')}.`, {
    param,
  });
}

function toApiError(error: ValueError): ApiError {
  const param = fieldOf(error);
  if (error.type === ValueErrorType.ObjectAdditionalProperties) {
    return new ApiError('unknown_parameter', `Unknown parameter: ${param}.`, { param });
  }
  if (error.type === ValueErrorType.ObjectRequiredProperty) {
    return new ApiError('missing_parameter', `${param} is required.`, { param });
  }
  if (error.type === ValueErrorType.Union) return unionError(error, param);
  return new ApiError('invalid_parameter', `${param}: ${error.message.toLowerCase()}.`, { param });
}

/** The error to answer for a check's errors: an unknown field before the others, as the /v1 routes answer. */
export function schemaError(errors: Iterable<ValueError>): ApiError {
  let first: ValueError | undefined;
  for (const error of errors) {
    if (error.type === ValueErrorType.ObjectAdditionalProperties) return toApiError(error);
    first ??= error;
  }
  if (!first) throw new Error('schemaError needs at least one error');
  return toApiError(first);
}
