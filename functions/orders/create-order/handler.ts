// Placeholder until the handler lands in the next commit; keeps the topology's entries resolvable.
export function createHandler(
  _env: Readonly<Record<string, string | undefined>>,
): (event: unknown, context: unknown) => Promise<unknown> {
  throw new Error('not implemented yet');
}
