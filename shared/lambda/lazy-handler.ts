/**
 * Defers building a handler until its first invocation, so that a module never reads its environment at
 * import time (STYLE §10) and the local runtime can build the same handler from its own environment.
 * @example
 * export const handler = lazyHandler(() => createHandler(process.env));
 */
export function lazyHandler<TEvent, TResult, TContext>(
  build: () => (event: TEvent, context: TContext) => Promise<TResult>,
): (event: TEvent, context: TContext) => Promise<TResult> {
  let built: ((event: TEvent, context: TContext) => Promise<TResult>) | undefined;
  return (event, context) => {
    built ??= build();
    return built(event, context);
  };
}
