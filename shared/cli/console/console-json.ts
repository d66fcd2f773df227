/** JSON as the console sends it: exact DynamoDB numbers (big integers) as text, sets as arrays. */
export function consoleJson(value: unknown): string {
  return JSON.stringify(value, (_key, item: unknown) =>
    typeof item === 'bigint' ? item.toString() : item instanceof Set ? [...item] : item,
  );
}
