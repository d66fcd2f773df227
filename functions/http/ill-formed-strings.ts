import { fieldPath } from './field-path.ts';
import type { RequestProblem } from './responses.ts';

/**
 * Every string of a parsed JSON body, keys included, that is not well-formed UTF-16: a lone surrogate such
 * as `"\ud800"` is valid JSON but has no UTF-8 encoding, so it could be neither stored nor sent on unchanged.
 * Named by path; a bad key is named by the path it would have. Walks with a queue, not recursion, so a deeply
 * nested body cannot overflow the stack.
 */
export function illFormedStrings(body: unknown): RequestProblem[] {
  const problems: RequestProblem[] = [];
  const queue: { readonly value: unknown; readonly path: string }[] = [{ value: body, path: '' }];
  // An array iterator reads the length afresh at every step, so the loop also visits what it appends.
  for (const { value, path } of queue) {
    if (typeof value === 'string') {
      if (!value.isWellFormed()) problems.push({ field: path || '(body)', problem: LONE_SURROGATE });
    } else if (Array.isArray(value)) {
      for (const [index, item] of value.entries()) queue.push({ value: item, path: fieldPath(path, index) });
    } else if (value !== null && typeof value === 'object') {
      for (const [key, child] of Object.entries(value)) {
        const childPath = fieldPath(path, key);
        if (!key.isWellFormed()) problems.push({ field: childPath, problem: `the key ${LONE_SURROGATE}` });
        queue.push({ value: child, path: childPath });
      }
    }
  }
  return problems;
}

const LONE_SURROGATE =
  'contains a lone surrogate (an unpaired \\ud800-\\udfff escape), which is not valid Unicode';
