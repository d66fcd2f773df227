/**
 * The enumerable keys every plain object now inherits: none, unless input reached `Object.prototype` (a key
 * `__proto__` written into a plain object by assignment). They are removed again, so that one polluting case
 * cannot break the cases and test files that run after it, and returned for the test to fail on.
 */
export function takePrototypePollution(): string[] {
  const polluted: string[] = [];
  for (const key in {}) polluted.push(key);
  for (const key of polluted) delete (Object.prototype as Record<string, unknown>)[key];
  return polluted;
}
