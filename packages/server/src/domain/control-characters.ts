/**
 * Text a client names things with (URLs, emails, key names) holds no control characters: they have no place in
 * a label or an address, they make log lines lie, URL parsers drop or encode them (so what is stored would not
 * be what is used), and PostgreSQL refuses a NUL byte outright where SQLite stores it, so without this rule the
 * same request would fare differently on the two stores.
 */
import { ApiError } from './errors.js';

/** C0 controls and DEL. */
// biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
const CONTROL_CHARACTER = /[\u0000-\u001f\u007f]/;

export function hasControlCharacters(text: string): boolean {
  return CONTROL_CHARACTER.test(text);
}

/** Refuses `value` as the parameter `param` when it holds a control character; `hint` ends the message. */
export function refuseControlCharacters(value: string, param: string, hint = ''): void {
  if (hasControlCharacters(value)) {
    throw new ApiError('invalid_parameter', `${param} must not contain control characters${hint}.`, {
      param,
    });
  }
}
