/**
 * Vitest's global setup: says at the start of the run, and again at its end, what the tests run on — the Node.js
 * version, moto or the embedded backend for the emulator suites, whether cfn-lint is there — and so which suites
 * and checks are skipped and why. A machine with nothing but Node runs `npm test` to green, and says so.
 */
import { spawnSync } from 'node:child_process';
import { isMotoInstalled } from '../../../infra/dev/local/backends/choose-backend.ts';

const TEST_BACKEND_VARIABLE = 'OUTBOX_TEST_BACKEND';
const ANNOUNCED = Symbol.for('serverless-outbox.test.environment-announced');

/** The lines the run starts and ends with. */
async function environmentLines(): Promise<string[]> {
  const moto = await isMotoInstalled();
  const forced = process.env[TEST_BACKEND_VARIABLE];
  const backend = forced === 'moto' || forced === 'embedded' ? forced : moto ? 'moto' : 'embedded';
  const cfnLint = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' }).error === undefined;
  const why =
    forced === 'embedded' || forced === 'moto'
      ? `${TEST_BACKEND_VARIABLE}=${forced}`
      : moto
        ? 'moto is installed'
        : 'moto is not installed';
  return [
    `test run on Node ${process.version} (${process.execPath})`,
    `  emulator suites: ${backend === 'moto' ? 'moto' : 'the embedded backend'} (${why})` +
      (backend === 'embedded'
        ? "; suites only moto can serve are skipped, each with its reason in its title (pip install 'moto[server]==5.2.1' to run them)"
        : ''),
    `  cfn-lint: ${cfnLint ? 'on the PATH, the template lint runs' : 'not on the PATH, the template lint is skipped (pip install cfn-lint); cdk-nag runs either way'}`,
  ];
}

/** Prints the environment first; the returned teardown prints it again after the results. */
export default async function announceEnvironment(): Promise<() => void> {
  // Each project inherits the global setup: the run announces itself once.
  const flag = globalThis as { [ANNOUNCED]?: boolean };
  if (flag[ANNOUNCED] === true) return () => {};
  flag[ANNOUNCED] = true;
  const lines = await environmentLines();
  process.stdout.write(`\n${lines.join('\n')}\n\n`);
  return () => {
    process.stdout.write(`\n${lines.join('\n')}\n`);
  };
}
