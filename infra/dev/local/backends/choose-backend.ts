/**
 * Which backend a local run uses: an emulator named by an endpoint (`AWS_ENDPOINT_URL`), else a fresh moto
 * when moto is installed, else the embedded in-memory backend. An explicit choice overrides. Light on
 * purpose: `npm start` decides (and says) which backend runs before it loads anything else.
 */
import { spawn } from 'node:child_process';
import { access, constants } from 'node:fs/promises';
import { delimiter, join } from 'node:path';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import type { BackendKind } from './backend.ts';

/** The backend a run will use. */
export type BackendChoice =
  | { readonly kind: 'external'; readonly endpoint: string }
  | { readonly kind: 'moto' }
  | { readonly kind: 'embedded'; readonly forced: boolean };

/** What {@link chooseBackend} decides from. */
export interface BackendPreference {
  /** Forces a kind; `external` needs an endpoint. @default chosen as the module comment says */
  readonly backend?: BackendKind;
  /** An emulator that is already running. @default env.AWS_ENDPOINT_URL */
  readonly endpoint?: string;
  /** @default process.env */
  readonly env?: Readonly<Record<string, string | undefined>>;
}

/**
 * The backend to use.
 * @example
 * const choice = await chooseBackend({ env: process.env }); // { kind: 'moto' } on a machine with moto
 */
export async function chooseBackend(preference: BackendPreference = {}): Promise<BackendChoice> {
  const env = preference.env ?? process.env;
  const endpoint = nonEmpty(preference.endpoint) ?? nonEmpty(env.AWS_ENDPOINT_URL);
  switch (preference.backend) {
    case 'external':
      if (endpoint === undefined) {
        throw new LocalRuntimeError(
          'INVALID_OPTION',
          'backend external needs an endpoint: set AWS_ENDPOINT_URL or pass the endpoint',
        );
      }
      return { kind: 'external', endpoint };
    case 'moto':
      return { kind: 'moto' };
    case 'embedded':
      return { kind: 'embedded', forced: true };
    default:
      if (endpoint !== undefined) return { kind: 'external', endpoint };
      return (await isMotoInstalled(env)) ? { kind: 'moto' } : { kind: 'embedded', forced: false };
  }
}

/** One line saying which backend runs and how to get the full-fidelity one: `npm start` prints it first. */
export function describeBackendChoice(choice: BackendChoice): string {
  switch (choice.kind) {
    case 'external':
      return (
        `backend: the emulator at ${choice.endpoint} (AWS_ENDPOINT_URL); the stack is created once and then ` +
        'updated in place, so its data survives restarts'
      );
    case 'moto':
      return (
        'backend: moto, fresh for this run (full fidelity); set AWS_ENDPOINT_URL to use an emulator you ' +
        'already run and keep its data between runs'
      );
    case 'embedded':
      return (
        `backend: embedded, in memory${choice.forced ? '' : ' (moto is not installed)'}; for full fidelity ` +
        "install moto (pip install 'moto[server]') or point AWS_ENDPOINT_URL at an emulator (LocalStack, moto)"
      );
  }
}

/**
 * Whether moto can be started: `moto_server` on the PATH (no process needed), else a python3 that has the
 * `moto.server` module.
 */
export async function isMotoInstalled(
  env: Readonly<Record<string, string | undefined>> = process.env,
): Promise<boolean> {
  if (await onPath('moto_server', env.PATH)) return true;
  return new Promise((resolve) => {
    const probe = spawn(
      'python3',
      [
        '-c',
        "import importlib.util as u, os, sys; s = u.find_spec('moto'); sys.exit(0 if s and os.path.exists(os.path.join(s.submodule_search_locations[0], 'server.py')) else 1)",
      ],
      { stdio: 'ignore', env: { ...process.env, ...env } as NodeJS.ProcessEnv },
    );
    probe.once('error', () => resolve(false));
    probe.once('exit', (code) => resolve(code === 0));
  });
}

async function onPath(command: string, path: string | undefined): Promise<boolean> {
  for (const directory of (path ?? '').split(delimiter)) {
    if (directory === '') continue;
    try {
      await access(join(directory, command), constants.X_OK);
      return true;
    } catch {
      // Not in this directory.
    }
  }
  return false;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
