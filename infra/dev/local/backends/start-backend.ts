/**
 * Starts the chosen backend: a fresh moto on a free loopback port, a connection to an emulator that is already
 * running, or the embedded in-memory backend (loaded only when chosen).
 */

import { LocalRuntimeError } from '../local-runtime-error.ts';
import type { Backend } from './backend.ts';
import type { BackendChoice } from './choose-backend.ts';
import { deployStack } from './cloudformation-deploy.ts';
import { startMotoServer, waitUntilAnswering } from './moto-server.ts';

/** Options of {@link startBackend}. */
export interface StartBackendOptions {
  /** Receives the runtime's notes about the deploy. */
  readonly log?: (line: string) => void;
  /** Receives moto's request log and warnings. @default dropped */
  readonly emulatorLog?: (line: string) => void;
  /** How long to wait for the backend to answer. @default 30_000 */
  readonly readyTimeoutMs?: number;
  /** The embedded backend's data folder. @default in memory */
  readonly dataDir?: string;
}

const DEFAULTS = { readyTimeoutMs: 30_000 } as const;

/**
 * Starts (moto, embedded) or connects to (external) the chosen backend.
 * @example
 * const backend = await startBackend(await chooseBackend());
 * const stack = await backend.deploy(template, 'NotesApp-local');
 */
export async function startBackend(
  choice: BackendChoice,
  options: StartBackendOptions = {},
): Promise<Backend> {
  switch (choice.kind) {
    case 'external':
      return connectExternalBackend(choice.endpoint, options);
    case 'moto':
      return startMotoBackend(options);
    case 'embedded':
      return startEmbedded(options);
  }
}

/** A fresh moto on a free loopback port; `stop()` ends it. */
export async function startMotoBackend(options: StartBackendOptions = {}): Promise<Backend> {
  const moto = await startMotoServer({
    log: options.emulatorLog,
    ...(options.readyTimeoutMs === undefined ? {} : { readyTimeoutMs: options.readyTimeoutMs }),
  });
  return {
    kind: 'moto',
    endpoint: moto.endpoint,
    pid: moto.pid,
    deploy: (template, stackName) =>
      deployStack({ endpoint: moto.endpoint, template, stackName, log: options.log }),
    stop: () => moto.stop(),
  };
}

/** An emulator that is already running (LocalStack, a moto of your own); `stop()` leaves it running. */
export async function connectExternalBackend(
  endpoint: string,
  options: StartBackendOptions = {},
): Promise<Backend> {
  const base = endpoint.replace(/\/+$/, '');
  await waitUntilAnswering(base, options.readyTimeoutMs ?? DEFAULTS.readyTimeoutMs).catch(
    (cause: unknown) => {
      throw new LocalRuntimeError('BACKEND_UNAVAILABLE', `the emulator at ${base} does not answer HTTP`, {
        cause,
      });
    },
  );
  return {
    kind: 'external',
    endpoint: base,
    deploy: (template, stackName) => deployStack({ endpoint: base, template, stackName, log: options.log }),
    stop: async () => {},
  };
}

/** The embedded backend, imported only when it is chosen: it loads the in-memory adapters. */
async function startEmbedded(options: StartBackendOptions): Promise<Backend> {
  const { startEmbeddedBackend } = await import('./embedded/index.ts');
  return startEmbeddedBackend({
    ...(options.log === undefined ? {} : { log: options.log }),
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
  });
}
