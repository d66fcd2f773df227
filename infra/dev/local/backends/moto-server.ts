/**
 * Starts a fresh moto server for one local run, on a free loopback port. A fresh moto per run keeps state
 * small: moto slows down as data grows, and it keeps every model instance alive.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { createServer, type Socket } from 'node:net';
import type { Readable } from 'node:stream';
import { setTimeout as sleep } from 'node:timers/promises';
import { LocalRuntimeError } from '../local-runtime-error.ts';

/** A moto server this process started. */
export interface MotoServer {
  /** Base URL, e.g. `http://127.0.0.1:50123`. */
  readonly endpoint: string;
  readonly pid: number;
  /** Stops the server (with its children) and waits for it to exit. */
  stop(): Promise<void>;
}

/** Options of {@link startMotoServer}. */
export interface MotoServerOptions {
  /** Port to bind on 127.0.0.1; a free port when omitted. */
  readonly port?: number;
  /** How long to wait for the server to answer HTTP. */
  readonly readyTimeoutMs?: number;
  /** Receives moto's own output (its request log); dropped when omitted. */
  readonly log?: (line: string) => void;
}

const DEFAULTS = {
  // Loopback only: the emulator accepts any credentials, so it must not be reachable from the network.
  // SDK clients work with the IP form; only `cdk deploy`'s asset publishing needs `localhost` (it puts the
  // bucket in the host name), and the local runtime deploys with CreateStack, not the CDK CLI.
  host: '127.0.0.1',
  // moto imports every service's models on start: a few seconds, more on a cold or busy machine.
  readyTimeoutMs: 30_000,
  stopTimeoutMs: 5_000,
  pollIntervalMs: 100,
} as const;

/**
 * Python started with this script serves moto exactly like `moto_server`, and also exits when its stdin
 * reaches EOF: stdin is a pipe from this Node process, so moto goes away however Node dies (even SIGKILL,
 * where no `exit` handler runs).
 */
const WATCHDOG_SCRIPT = [
  'import os, sys, threading',
  'def _exit_with_parent():',
  // Raw os.read, not sys.stdin: a thread blocked in the buffered reader aborts interpreter shutdown.
  '    while os.read(0, 4096):',
  '        pass',
  '    os._exit(0)',
  'threading.Thread(target=_exit_with_parent, daemon=True).start()',
  'from moto.server import main',
  'main(sys.argv[1:])',
].join('\n');

/** Ways to launch moto, best first: the watchdog needs moto importable by `python3`; `moto_server` is the plain CLI. */
function launchCommands(host: string, port: number): readonly { command: string; args: string[] }[] {
  const serverArgs = ['-H', host, '-p', String(port)];
  return [
    { command: 'python3', args: ['-c', WATCHDOG_SCRIPT, ...serverArgs] },
    { command: 'moto_server', args: serverArgs },
  ];
}

/** A free TCP port on the loopback interface (bind port 0, read the port the OS chose, release it). */
export async function findFreePort(host: string = DEFAULTS.host): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.unref();
    server.once('error', reject);
    server.listen(0, host, () => {
      const address = server.address();
      const port = typeof address === 'object' && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

/** Whether anything answers HTTP at `endpoint` (any status counts: the server is up). */
export async function answersHttp(endpoint: string, timeoutMs = 1_000): Promise<boolean> {
  try {
    const response = await fetch(endpoint, { signal: AbortSignal.timeout(timeoutMs) });
    await response.body?.cancel();
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts `moto_server` on 127.0.0.1 (a free port unless given) and resolves once it answers HTTP.
 * @example
 * const moto = await startMotoServer();
 * try { ... new DynamoDBClient(emulatorClientConfig(moto.endpoint)) ... } finally { await moto.stop(); }
 */
export async function startMotoServer(options: MotoServerOptions = {}): Promise<MotoServer> {
  const port = options.port ?? (await findFreePort());
  const endpoint = `http://${DEFAULTS.host}:${port}`;
  const readyTimeoutMs = options.readyTimeoutMs ?? DEFAULTS.readyTimeoutMs;
  const failures: string[] = [];
  for (const { command, args } of launchCommands(DEFAULTS.host, port)) {
    const attempt = await launch({ command, args, endpoint, readyTimeoutMs, log: options.log });
    if (attempt.kind === 'ready') return attempt.emulator;
    failures.push(`${command}: ${attempt.reason}`);
  }
  throw new LocalRuntimeError(
    'BACKEND_UNAVAILABLE',
    `could not start moto on ${endpoint} (is moto[server] 5.x installed for python3?)\n${failures.join('\n')}`,
  );
}

type LaunchResult = { kind: 'ready'; emulator: MotoServer } | { kind: 'failed'; reason: string };

interface LaunchOptions {
  readonly command: string;
  readonly args: readonly string[];
  readonly endpoint: string;
  readonly readyTimeoutMs: number;
  readonly log: ((line: string) => void) | undefined;
}

async function launch(options: LaunchOptions): Promise<LaunchResult> {
  const { command, args, endpoint, readyTimeoutMs, log } = options;
  // Detached: moto leads its own process group, so stop() can signal it with any children at once, and a
  // terminal's Ctrl-C reaches only Node, which then shuts down in order (pollers first, moto last).
  const child = spawn(command, [...args], { detached: true, stdio: ['pipe', 'pipe', 'pipe'] });
  const recent: string[] = [];
  const onLine = (line: string): void => {
    recent.push(line);
    if (recent.length > 20) recent.shift();
    log?.(line);
  };
  // Always drain moto's output: a full pipe would block its request log and with it every request.
  forEachLine(child.stdout, onLine);
  forEachLine(child.stderr, onLine);
  const exited = new Promise<string>((resolve) => {
    child.once('error', (error) => resolve(error.message));
    child.once('exit', (code, signal) => resolve(`exited with ${signal ?? `code ${code}`}`));
  });
  const ready = waitUntilAnswering(endpoint, readyTimeoutMs).then(
    () => 'ready' as const,
    (error: unknown) => `did not answer within ${readyTimeoutMs} ms (${String(error)})`,
  );
  const outcome = await Promise.race([ready, exited]);
  if (outcome === 'ready' && child.pid !== undefined) {
    return { kind: 'ready', emulator: ownedEmulator(child, child.pid, endpoint) };
  }
  killGroup(child, 'SIGKILL');
  return { kind: 'failed', reason: `${outcome}\n${recent.join('\n')}`.trim() };
}

function ownedEmulator(child: ChildProcess, pid: number, endpoint: string): MotoServer {
  const exited = new Promise<void>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve();
    else child.once('exit', () => resolve());
  });
  // `exit` handlers run on process.exit() and a normal end, not on an unhandled signal; the watchdog's stdin
  // pipe covers that case.
  const killOnExit = (): void => killGroup(child, 'SIGKILL');
  process.on('exit', killOnExit);
  // A forgotten stop() must not keep Node alive: the exit handler and the watchdog still end moto.
  child.unref();
  for (const stream of [child.stdin, child.stdout, child.stderr]) (stream as Socket | null)?.unref();
  let stopping: Promise<void> | undefined;
  return {
    endpoint,
    pid,
    stop: () => {
      stopping ??= (async () => {
        // Waiting for the exit must keep Node alive: the child is unref'd, and with nothing else left the
        // event loop would empty before moto's exit event and end the process mid-stop (caught by the drill).
        child.ref();
        killGroup(child, 'SIGTERM');
        const timedOut = await Promise.race([
          exited.then(() => false),
          sleep(DEFAULTS.stopTimeoutMs).then(() => true),
        ]);
        if (timedOut) {
          killGroup(child, 'SIGKILL');
          await exited;
        }
        process.off('exit', killOnExit);
      })();
      return stopping;
    },
  };
}

function killGroup(child: ChildProcess, signal: NodeJS.Signals): void {
  if (child.pid === undefined) return;
  try {
    // A negative pid signals the whole process group (moto and anything it forked).
    process.kill(-child.pid, signal);
  } catch {
    // Already gone.
  }
}

/** Resolves once anything answers HTTP at `endpoint`; throws after `timeoutMs`. */
export async function waitUntilAnswering(endpoint: string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline) {
    if (await answersHttp(endpoint)) return;
    await sleep(DEFAULTS.pollIntervalMs);
  }
  throw new Error(`no HTTP answer from ${endpoint} within ${timeoutMs} ms`);
}

function forEachLine(stream: Readable | null, onLine: (line: string) => void): void {
  if (stream === null) return;
  let pending = '';
  stream.setEncoding('utf8');
  stream.on('data', (chunk: string) => {
    pending += chunk;
    const lines = pending.split('\n');
    pending = lines.pop() ?? '';
    for (const line of lines) if (line.trim() !== '') onLine(line);
  });
}
