/**
 * `npm start` as a user runs it, from a test: the real npm, in a process group of its own, with a free port and
 * no AWS credentials; helpers to wait for it, find every process of its tree and check that none is left.
 */
import { type ChildProcess, execFileSync, spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { connect } from 'node:net';
import { join, resolve } from 'node:path';
import { findFreePort } from '../../../infra/dev/local/backends/moto-server.ts';

export const ROOT = resolve(import.meta.dirname, '../../..');

/**
 * How long what was in flight when npm start was killed may take to finish after a start: usually seconds (the
 * stream resumes at its checkpoint, the queue poller hands back the killed run's receives), but a kill between the
 * relay's SENT mark and its send leaves a message SENT and never sent, which the sweeper resends once the
 * confirmation deadline (5 minutes by default) has passed, at its next run (every minute); and a minute for a busy
 * machine.
 */
export const RECOVERY_BOUND_MS = 7 * 60_000;

/** A running `npm start`. */
export interface NpmStart {
  readonly child: ChildProcess;
  readonly port: number;
  readonly apiUrl: string;
  /** Everything it printed so far, stdout and stderr. */
  output(): string;
  /** Resolves with how npm ended. */
  readonly exited: Promise<{ code: number | null; signal: NodeJS.Signals | null }>;
}

/** How {@link startNpm} starts it. */
export interface NpmStartOptions {
  /** Set over the test's environment, after the AWS credentials and endpoint are taken out of it. */
  readonly env?: Readonly<Record<string, string | undefined>>;
  /** How long it may take to be ready; 150 s by default. */
  readonly timeoutMs?: number;
  /**
   * Runs what the start script runs without npm in front, so `child` is the runtime itself: a SIGKILL of it then
   * hits the process that holds the work, where a SIGKILL of npm would leave the runtime to stop on its own.
   */
  readonly withoutNpm?: boolean;
}

/**
 * The start script's arguments to node (`exec node <these>` in package.json), read from the script itself so a
 * test that skips npm runs the same command.
 */
function startScriptNodeArgs(): string[] {
  const { scripts } = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    scripts: { start: string };
  };
  const [exec, node, ...args] = scripts.start.trim().split(/\s+/);
  if (exec !== 'exec' || node !== 'node') {
    throw new Error(`package.json's start script is no longer "exec node …": ${scripts.start}`);
  }
  return args;
}

/**
 * Starts `npm start -- <args>` (or, {@link NpmStartOptions.withoutNpm}, the command it runs) and resolves once it
 * prints that it is ready (or fails with its output).
 */
export async function startNpm(args: readonly string[], options: NpmStartOptions = {}): Promise<NpmStart> {
  const port = await findFreePort();
  // No AWS credentials or endpoint unless the test gives them: `npm start` must work on a machine that has never
  // seen AWS.
  const env: Record<string, string | undefined> = { ...process.env };
  for (const name of [
    'AWS_ACCESS_KEY_ID',
    'AWS_SECRET_ACCESS_KEY',
    'AWS_SESSION_TOKEN',
    'AWS_PROFILE',
    'AWS_ENDPOINT_URL',
  ]) {
    delete env[name];
  }
  Object.assign(env, { PORT: String(port) }, options.env);
  const [command, commandArgs] = options.withoutNpm
    ? [process.execPath, [...startScriptNodeArgs(), ...args]]
    : ['npm', ['start', '--', ...args]];
  // Its own process group, as a terminal gives a command: the test can signal the group as Ctrl-C does.
  const child = spawn(command, commandArgs, {
    cwd: ROOT,
    env,
    stdio: ['ignore', 'pipe', 'pipe'],
    detached: true,
  });
  let output = '';
  child.stdout?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  child.stderr?.on('data', (chunk: Buffer) => {
    output += chunk.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolveExit) =>
    child.once('exit', (code, signal) => resolveExit({ code, signal })),
  );
  const started: NpmStart = { child, port, apiUrl: `http://127.0.0.1:${port}`, output: () => output, exited };
  const deadline = Date.now() + (options.timeoutMs ?? 150_000);
  while (!output.includes('stops everything')) {
    if (Date.now() > deadline || child.exitCode !== null) {
      killTree(descendants(child.pid ?? -1).concat(child.pid ?? -1));
      throw new Error(`npm start did not become ready:\n${output}`);
    }
    await new Promise((resolveWait) => setTimeout(resolveWait, 100));
  }
  return started;
}

/** Pids of every descendant of `pid` (children, their children…), from `ps`. */
export function descendants(pid: number): number[] {
  const table = execFileSync('ps', ['-eo', 'pid=,ppid='], { encoding: 'utf8' })
    .trim()
    .split('\n')
    .map((row) => row.trim().split(/\s+/).map(Number) as [number, number]);
  const found: number[] = [];
  const visit = (parent: number): void => {
    for (const [child, ppid] of table) {
      if (ppid === parent && !found.includes(child)) {
        found.push(child);
        visit(child);
      }
    }
  };
  visit(pid);
  return found;
}

/** Whether a process is alive (a zombie of an exited child counts as gone). */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    const state = execFileSync('ps', ['-o', 'stat=', '-p', String(pid)], { encoding: 'utf8' }).trim();
    return state !== '' && !state.startsWith('Z');
  } catch {
    return false;
  }
}

/** Whether something accepts connections on the loopback port. */
export function portInUse(port: number): Promise<boolean> {
  return new Promise((resolveCheck) => {
    const socket = connect({ host: '127.0.0.1', port });
    socket.once('connect', () => {
      socket.destroy();
      resolveCheck(true);
    });
    socket.once('error', () => resolveCheck(false));
  });
}

/** SIGKILLs what a failed test left behind (only the given pids: processes this test started). */
export function killTree(pids: readonly number[]): void {
  for (const pid of pids) {
    if (pid <= 0) continue;
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone already.
    }
  }
}
