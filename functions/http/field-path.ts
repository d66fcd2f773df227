/** A key that reads as is after a dot; any other key is written as a quoted index (`a["b c"]`). */
const PLAIN_KEY = /^[A-Za-z_$][\w$]*$/;

/**
 * The name of a field of a request body as a client writes it: `items[0].quantity`; a key that is not a plain
 * identifier is quoted (`labels["gift wrap"]`). `parent` is `''` at the top of the body.
 */
export function fieldPath(parent: string, key: string | number): string {
  if (typeof key === 'number') return `${parent}[${key}]`;
  if (!PLAIN_KEY.test(key)) return `${parent}[${JSON.stringify(key)}]`;
  return parent === '' ? key : `${parent}.${key}`;
}
