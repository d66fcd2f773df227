/** The only media type the JSON routes accept. */
export const JSON_MEDIA_TYPE = 'application/json';

/**
 * Why a `content-type` header does not announce a UTF-8 JSON body, or `undefined` when it does. The media
 * type is compared case-insensitively and parameters are allowed, but a `charset` other than UTF-8 is not:
 * the body would be read as UTF-8 all the same and stored changed.
 * @example
 * jsonContentTypeProblem('application/json; charset=UTF-8'); // undefined
 * jsonContentTypeProblem('text/plain'); // 'is "text/plain"; send application/json'
 */
export function jsonContentTypeProblem(header: string | undefined): string | undefined {
  if (header === undefined || header.trim() === '') return `is missing; send ${JSON_MEDIA_TYPE}`;
  const [mediaType = '', ...parameters] = header.split(';');
  if (mediaType.trim().toLowerCase() !== JSON_MEDIA_TYPE) {
    return `is "${mediaType.trim()}"; send ${JSON_MEDIA_TYPE}`;
  }
  for (const parameter of parameters) {
    const separator = parameter.indexOf('=');
    if (separator < 0 || parameter.slice(0, separator).trim().toLowerCase() !== 'charset') continue;
    const charset = unquote(parameter.slice(separator + 1).trim());
    if (charset.toLowerCase() !== 'utf-8') return `has charset "${charset}"; only utf-8 is accepted`;
  }
  return undefined;
}

/** A parameter value without the quotes of a quoted string (`"utf-8"` → `utf-8`). */
function unquote(value: string): string {
  return value.length >= 2 && value.startsWith('"') && value.endsWith('"')
    ? value.slice(1, -1).replace(/\\(.)/g, '$1')
    : value;
}
