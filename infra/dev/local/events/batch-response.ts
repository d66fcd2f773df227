/** Reads a batch handler's partial batch response, the same way for stream and queue mappings. Pure. */

/**
 * The `itemIdentifier`s of a batch response; `[]` for an empty or absent response (success), `undefined`
 * when the response is malformed.
 */
export function batchItemFailureIds(result: unknown): string[] | undefined {
  if (result === undefined || result === null) return [];
  if (typeof result !== 'object') return undefined;
  const failures = (result as { batchItemFailures?: unknown }).batchItemFailures;
  if (failures === undefined || failures === null) return [];
  if (!Array.isArray(failures)) return undefined;
  const ids: string[] = [];
  for (const failure of failures) {
    const id =
      typeof failure === 'object' && failure !== null
        ? (failure as { itemIdentifier?: unknown }).itemIdentifier
        : undefined;
    if (typeof id !== 'string' || id === '') return undefined;
    ids.push(id);
  }
  return ids;
}
