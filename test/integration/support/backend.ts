/**
 * Which backend the emulator suites run on: moto when it is installed (the reference), else the embedded
 * backend, so `npm test` passes on a machine with nothing but Node. `OUTBOX_TEST_BACKEND=embedded|moto` forces
 * one (CI runs the integration suite once on each). A suite that only moto can serve says why in its title and
 * is skipped on the embedded backend, never silently.
 */
import { describe, it } from 'vitest';
import type { BackendKind } from '../../../infra/dev/local/backends/backend.ts';
import { isMotoInstalled } from '../../../infra/dev/local/backends/choose-backend.ts';
import { startMotoServer } from '../../../infra/dev/local/backends/moto-server.ts';

/** The backends a test can run on. */
export type TestBackend = 'moto' | 'embedded';

/** The environment variable that forces the backend of the emulator suites. */
export const TEST_BACKEND_VARIABLE = 'OUTBOX_TEST_BACKEND';

/** Whether moto can be started on this machine. */
export const MOTO_INSTALLED = await isMotoInstalled();

/** The backend of this run: forced by {@link TEST_BACKEND_VARIABLE}, else moto when installed, else embedded. */
export const TEST_BACKEND: TestBackend = chooseTestBackend(process.env[TEST_BACKEND_VARIABLE]);

function chooseTestBackend(forced: string | undefined): TestBackend {
  if (forced === undefined || forced === '') return MOTO_INSTALLED ? 'moto' : 'embedded';
  if (forced !== 'moto' && forced !== 'embedded') {
    throw new Error(`${TEST_BACKEND_VARIABLE} must be moto or embedded, got "${forced}"`);
  }
  if (forced === 'moto' && !MOTO_INSTALLED) {
    throw new Error(
      `${TEST_BACKEND_VARIABLE}=moto, but moto is not installed: pip install 'moto[server]==5.2.1', or unset it to run on the embedded backend`,
    );
  }
  return forced;
}

/**
 * The backend option a runtime of the suites takes: the test backend, unless AWS_ENDPOINT_URL names an emulator
 * (the LocalStack run), which the runtime then uses.
 */
export function runtimeBackend(): BackendKind {
  const endpoint = process.env.AWS_ENDPOINT_URL;
  return endpoint !== undefined && endpoint !== '' ? 'external' : TEST_BACKEND;
}

/** An emulator a suite talks to over HTTP itself: moto, or the embedded backend, on a free loopback port. */
export interface TestEmulator {
  readonly kind: TestBackend;
  readonly endpoint: string;
  stop(): Promise<void>;
}

/** Starts the run's emulator: a fresh moto, or the embedded backend. */
export async function startTestEmulator(): Promise<TestEmulator> {
  if (TEST_BACKEND === 'moto') {
    const moto = await startMotoServer();
    return { kind: 'moto', endpoint: moto.endpoint, stop: () => moto.stop() };
  }
  const { startEmbeddedBackend } = await import('../../../infra/dev/local/backends/embedded/index.ts');
  const backend = await startEmbeddedBackend({ log: () => {} });
  return { kind: 'embedded', endpoint: backend.endpoint, stop: () => backend.stop() };
}

/**
 * `describe` for a suite only moto can serve; on the embedded backend it is skipped with `reason` in its title.
 * @example
 * describeOnMoto('starts moto itself: it tests the moto launcher')('startMotoServer', () => { ... });
 */
export function describeOnMoto(reason: string): (title: string, body: () => void) => void {
  return (title, body) =>
    TEST_BACKEND === 'moto'
      ? describe(title, body)
      : describe.skip(`${title} [skipped on the embedded backend, needs moto: ${reason}]`, body);
}

/** `it` for a test only moto can serve; see {@link describeOnMoto}. */
export function itOnMoto(reason: string): (title: string, body: () => Promise<void> | void) => void {
  return (title, body) =>
    TEST_BACKEND === 'moto'
      ? it(title, body)
      : it.skip(`${title} [skipped on the embedded backend, needs moto: ${reason}]`, body);
}
