import { resolve } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { AwsClientConfig } from '../aws/clients.ts';
import { ConfigError, describeError } from '../errors.ts';
import type { DiscoveredOutbox } from './stack-discovery.ts';

/** What a health hook learns: the outbox found in the stack (every resource with its physical id) and how to reach AWS. */
export interface HealthCheckContext {
  readonly outbox: DiscoveredOutbox;
  /** Endpoint, region and credentials the CLI's own clients use. */
  readonly clientConfig: AwsClientConfig;
}

/** A health hook's answer: whether the topic's downstream can take deliveries again, and why. */
export interface HealthResult {
  readonly healthy: boolean;
  readonly detail: string;
}

/**
 * A per-topic health check: `recover` asks it before it replays anything, and stops (exit code 3) when the
 * downstream is not healthy. A hook module exports it as `checkHealth`.
 * @example
 * export const checkHealth: HealthCheck = async (topic, { outbox }) => ({ healthy: true, detail: 'ok' });
 */
export type HealthCheck = (topic: string, context: HealthCheckContext) => Promise<HealthResult>;

/**
 * The `checkHealth` export of the module at `path` (relative to `cwd`). A {@link ConfigError} when the module
 * cannot be loaded or exports no function of that name. A `.ts` module needs a runtime that loads TypeScript
 * (`npm run outbox`, which runs through tsx).
 */
export async function loadHealthCheck(path: string, cwd: string = process.cwd()): Promise<HealthCheck> {
  let loaded: { checkHealth?: unknown };
  try {
    loaded = (await import(pathToFileURL(resolve(cwd, path)).href)) as { checkHealth?: unknown };
  } catch (cause) {
    throw new ConfigError(`--health ${path} cannot be loaded: ${describeError(cause)}`, { cause });
  }
  if (typeof loaded.checkHealth !== 'function') {
    throw new ConfigError(`--health ${path} exports no checkHealth(topic, context) function`);
  }
  return loaded.checkHealth as HealthCheck;
}
