/**
 * process.env as several plain handlers share it. A plain handler (not built with `withEnv`) reads its settings
 * from process.env, so its variables are set there before its module is imported and kept while the runtime
 * runs; two plain functions that need different values of one variable cannot share a process.
 */
import { LocalRuntimeError } from '../local-runtime-error.ts';

/** The process environment as the runtime manages it. */
export interface ProcessEnvironment {
  /**
   * Sets `variables` now (a module may read them at import time); `keep` then claims them for `owner`, or
   * fails with `ENVIRONMENT_CONFLICT` when an earlier owner claimed another value; `release` undoes the set.
   */
  offer(owner: string, variables: Readonly<Record<string, string>>): { keep(): void; release(): void };
  /** Puts back every value the runtime changed. */
  restore(): void;
}

/**
 * A {@link ProcessEnvironment} over `target`.
 * @example
 * const shared = processEnvironment();
 * const offer = shared.offer('Audit/Auditor', { NOTES_TABLE: 'notes' });
 * const module = await import(entry);
 * isEnvHandler(module.handler) ? offer.release() : offer.keep();
 */
export function processEnvironment(target: NodeJS.ProcessEnv = process.env): ProcessEnvironment {
  /** Values before the runtime first changed each variable (`undefined`: it was not set). */
  const original = new Map<string, string | undefined>();
  /** Variable → the value a plain function claimed, and which function. */
  const claims = new Map<string, { readonly owner: string; readonly value: string }>();

  const set = (name: string, value: string | undefined): void => {
    if (!original.has(name)) original.set(name, target[name]);
    if (value === undefined) delete target[name];
    else target[name] = value;
  };

  return {
    offer(owner, variables) {
      const previous = new Map(Object.keys(variables).map((name) => [name, target[name]]));
      for (const [name, value] of Object.entries(variables)) set(name, value);
      const release = (): void => {
        for (const [name, value] of previous) set(name, value);
      };
      return {
        release,
        keep() {
          const conflicts = Object.entries(variables).filter(([name, value]) => {
            const claim = claims.get(name);
            return claim !== undefined && claim.value !== value;
          });
          if (conflicts.length > 0) {
            release();
            const [name, value] = conflicts[0] ?? ['', ''];
            throw new LocalRuntimeError(
              'ENVIRONMENT_CONFLICT',
              `${owner} needs ${name}=${JSON.stringify(value)} in process.env, but ${claims.get(name)?.owner} ` +
                `needs ${JSON.stringify(claims.get(name)?.value)}; plain handlers share one process.env — build ` +
                'them with handlerFromEnv (serverless-outbox/lambda) so each gets its own environment',
            );
          }
          for (const [name, value] of Object.entries(variables)) claims.set(name, { owner, value });
        },
      };
    },
    restore() {
      for (const [name, value] of original) {
        if (value === undefined) delete target[name];
        else target[name] = value;
      }
      original.clear();
      claims.clear();
    },
  };
}
