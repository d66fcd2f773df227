import { fieldPath } from './field-path.ts';
import type { RequestProblem } from './responses.ts';

/** An object or array being scanned, with the path of the field that holds it. */
type Container =
  | {
      readonly kind: 'object';
      readonly path: string;
      readonly keys: Set<string>;
      key: string;
      atKey: boolean;
    }
  | { readonly kind: 'array'; readonly path: string; index: number };

/**
 * Every key that appears twice in one object of a JSON text, named by its path (`items[0].quantity`).
 * JSON.parse keeps the last value of a repeated key silently, so `{"quantity":5000,"quantity":1}` would mean
 * whatever the last reader decides. `json` must already have been parsed by JSON.parse: the scan relies on
 * it being valid and only tracks strings, brackets, colons and commas.
 * @example
 * duplicateKeys('{"items":[{"sku":"A","sku":"B"}]}'); // [{ field: 'items[0].sku', problem: … }]
 */
export function duplicateKeys(json: string): RequestProblem[] {
  const problems: RequestProblem[] = [];
  const open: Container[] = [];
  for (let at = 0; at < json.length; at += 1) {
    const char = json[at];
    const current = open.at(-1);
    if (char === '"') {
      const end = closingQuote(json, at);
      if (current?.kind === 'object' && current.atKey) {
        // Decoded, so that "a" and "\u0061" are seen as the same key.
        const key = JSON.parse(json.slice(at, end + 1)) as string;
        if (current.keys.has(key)) {
          problems.push({ field: fieldPath(current.path, key), problem: duplicateProblem(key) });
        }
        current.keys.add(key);
        current.key = key;
        current.atKey = false;
      }
      at = end;
    } else if (char === '{' || char === '[') {
      const path = current === undefined ? '' : fieldPath(current.path, heldAt(current));
      open.push(
        char === '{'
          ? { kind: 'object', path, keys: new Set(), key: '', atKey: true }
          : { kind: 'array', path, index: 0 },
      );
    } else if (char === '}' || char === ']') {
      open.pop();
    } else if (char === ',' && current !== undefined) {
      if (current.kind === 'object') current.atKey = true;
      else current.index += 1;
    }
  }
  return problems;
}

/** Where the value being read sits in its container: the current key or array index. */
function heldAt(container: Container): string | number {
  return container.kind === 'object' ? container.key : container.index;
}

/** The index of the quote that ends the string opening at `start`, stepping over escapes (`\"`, `\\`). */
function closingQuote(json: string, start: number): number {
  for (let at = start + 1; at < json.length; at += 1) {
    if (json[at] === '\\') at += 1;
    else if (json[at] === '"') return at;
  }
  return json.length;
}

function duplicateProblem(key: string): string {
  return `the key ${JSON.stringify(key)} appears more than once in this object; send it once`;
}
