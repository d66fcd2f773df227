/**
 * Functions run in a process of their own, on the Node.js their `Runtime` names, as `sam local` runs each
 * function in its runtime's image. A host process imports the handler modules once and serves invocations
 * over IPC. A reload starts a new host on the current code and sends it every invocation from then on, while
 * the old host finishes what it had in flight and exits; a reload whose code does not load leaves the old host
 * serving. A host that dies is replaced at the next invocation, as Lambda starts a new sandbox.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { LocalRuntimeError } from '../local-runtime-error.ts';
import { deserializeError, type HostedFunction, type HostReply, type HostRequest } from './host-protocol.ts';
import type { NodeBinary } from './node-runtime.ts';

/** Options of {@link startFunctionHost}. */
export interface FunctionHostOptions {
  /**
   * The functions, or a promise of them: the host process boots (Node, tsx) while the runtime deploys the stack
   * their environments are resolved against, and loads them once they are known.
   */
  readonly functions: readonly HostedFunction[] | Promise<readonly HostedFunction[]>;
  /** Where the entries are relative to, and the host's working directory. */
  readonly rootDir: string;
  readonly node: NodeBinary;
  readonly log: (line: string) => void;
  /** How long a host may take to load the modules. @default 120_000 */
  readonly loadTimeoutMs?: number;
}

/** What a loaded function reports. */
export interface HostedFunctionInfo {
  readonly plain: boolean;
  readonly initError: Error | undefined;
}

/** A running function host. */
export interface FunctionHost {
  readonly node: NodeBinary;
  /** What the host reported for each function when it loaded. */
  info(name: string): HostedFunctionInfo;
  /** Invokes a function in the current host: resolves with its result, rejects with its error. */
  call(name: string, event: unknown): Promise<unknown>;
  /**
   * Loads the current code in a new host and sends it the next invocations; the old host finishes in-flight ones.
   * On a load failure the old host keeps serving and the failure is returned (file and line in its message).
   */
  reload(): Promise<{ readonly ok: true } | { readonly ok: false; readonly error: Error }>;
  /** From now on every invocation's remaining time reads 0 (the runtime is stopping). */
  wrapUp(): void;
  /** Waits for in-flight invocations (up to `timeoutMs`), then ends the host. */
  stop(timeoutMs?: number): Promise<void>;
}

const DEFAULTS = { loadTimeoutMs: 120_000, stopTimeoutMs: 10_000 } as const;

const HOST_SCRIPT = new URL('./host-process.ts', import.meta.url);
/** tsx's loader, so the host imports TypeScript handler modules as this process does. */
const TSX_LOADER = import.meta.resolve('tsx');

/**
 * Starts a host with the functions loaded; throws `HANDLER_LOAD_FAILED` when their modules cannot be loaded.
 * @example
 * const host = await startFunctionHost({ functions, rootDir, node: findNodeBinary(24, rootDir), log });
 * const result = await host.call('Outbox/Relay', event);
 */
export async function startFunctionHost(options: FunctionHostOptions): Promise<FunctionHost> {
  let current = await Generation.start(options);
  let replacing: Promise<Generation> | undefined;
  let wrappingUp = false;
  const retire = (generation: Generation): void => {
    void generation.stop(DEFAULTS.stopTimeoutMs);
  };
  const replace = async (): Promise<Generation> => {
    const next = await Generation.start(options);
    if (wrappingUp) next.wrapUp();
    const previous = current;
    current = next;
    retire(previous);
    return next;
  };
  return {
    node: options.node,
    info: (name) => current.info(name),
    async call(name, event) {
      if (current.exited) {
        options.log(`[local] the function host exited (${current.exitReason}); starting a new one`);
        replacing ??= replace().finally(() => {
          replacing = undefined;
        });
        await replacing;
      }
      return current.call(name, event);
    },
    async reload() {
      try {
        await replace();
        return { ok: true };
      } catch (error) {
        return { ok: false, error: error instanceof Error ? error : new Error(String(error)) };
      }
    },
    wrapUp() {
      wrappingUp = true;
      current.wrapUp();
    },
    stop: (timeoutMs = DEFAULTS.stopTimeoutMs) => current.stop(timeoutMs),
  };
}

/** One host process and the invocations it has in flight. */
class Generation {
  exited = false;
  exitReason = '';
  readonly #child: ChildProcess;
  readonly #pending = new Map<number, { resolve(value: unknown): void; reject(error: Error): void }>();
  readonly #infos = new Map<string, HostedFunctionInfo>();
  readonly #exit: Promise<void>;
  #nextId = 0;
  #stopping: Promise<void> | undefined;

  private constructor(child: ChildProcess) {
    this.#child = child;
    this.#exit = new Promise((resolve) => {
      child.once('exit', (code, signal) => {
        this.exited = true;
        this.exitReason = signal === null ? `code ${code}` : signal;
        for (const { reject } of this.#pending.values()) {
          reject(
            new LocalRuntimeError(
              'FUNCTION_HOST_EXITED',
              `the function host exited (${this.exitReason}) mid-invocation`,
            ),
          );
        }
        this.#pending.clear();
        resolve();
      });
    });
    child.on('message', (message: HostReply) => {
      if (message.type !== 'result') return;
      const pending = this.#pending.get(message.id);
      if (pending === undefined) return;
      this.#pending.delete(message.id);
      if (message.ok) pending.resolve(message.result);
      else pending.reject(deserializeError(message.error));
    });
  }

  static async start(options: FunctionHostOptions): Promise<Generation> {
    const child = fork(HOST_SCRIPT, [], {
      execPath: options.node.path,
      execArgv: ['--import', TSX_LOADER],
      cwd: options.rootDir,
      // The handlers' own logs go where this process's go, as they did in-process.
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
      serialization: 'advanced',
    });
    const generation = new Generation(child);
    const loaded = new Promise<Extract<HostReply, { type: 'loaded' | 'load-failed' }>>((resolve, reject) => {
      const onMessage = (message: HostReply): void => {
        if (message.type !== 'loaded' && message.type !== 'load-failed') return;
        child.off('message', onMessage);
        resolve(message);
      };
      child.on('message', onMessage);
      child.once('error', reject);
      child.once('exit', (code, signal) =>
        reject(new Error(`the function host exited before it loaded (${signal ?? `code ${code}`})`)),
      );
    });
    const timeoutMs = options.loadTimeoutMs ?? DEFAULTS.loadTimeoutMs;
    let timer: NodeJS.Timeout | undefined;
    try {
      const functions = await options.functions;
      if (generation.exited)
        throw new Error(`the function host exited before it loaded (${generation.exitReason})`);
      generation.#send({ type: 'load', rootDir: options.rootDir, functions });
      const reply = await Promise.race([
        loaded,
        new Promise<never>((_, reject) => {
          timer = setTimeout(
            () => reject(new Error(`the function host did not load within ${timeoutMs} ms`)),
            timeoutMs,
          );
        }),
      ]);
      if (reply.type === 'load-failed') throw deserializeError(reply.error);
      for (const fn of reply.functions) {
        generation.#infos.set(fn.name, {
          plain: fn.plain,
          initError: fn.initError === undefined ? undefined : deserializeError(fn.initError),
        });
      }
      return generation;
    } catch (cause) {
      child.kill('SIGKILL');
      throw new LocalRuntimeError('HANDLER_LOAD_FAILED', describeLoadFailure(cause), { cause });
    } finally {
      clearTimeout(timer);
    }
  }

  info(name: string): HostedFunctionInfo {
    return this.#infos.get(name) ?? { plain: false, initError: undefined };
  }

  call(name: string, event: unknown): Promise<unknown> {
    return new Promise((resolve, reject) => {
      const id = this.#nextId++;
      this.#pending.set(id, { resolve, reject });
      try {
        this.#send({ type: 'invoke', id, name, event });
      } catch (error) {
        this.#pending.delete(id);
        reject(error instanceof Error ? error : new Error(String(error)));
      }
    });
  }

  wrapUp(): void {
    if (!this.exited) this.#send({ type: 'wrap-up' });
  }

  /** Lets in-flight invocations finish (within `timeoutMs`), then ends the process. */
  stop(timeoutMs: number): Promise<void> {
    this.#stopping ??= (async () => {
      const deadline = Date.now() + timeoutMs;
      while (this.#pending.size > 0 && !this.exited && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      if (!this.exited) {
        // Closing the channel ends the host (it exits on disconnect); SIGKILL if it does not go.
        this.#child.disconnect();
        const timer = setTimeout(() => this.#child.kill('SIGKILL'), 2_000);
        await this.#exit;
        clearTimeout(timer);
      }
    })();
    return this.#stopping;
  }

  #send(message: HostRequest): void {
    this.#child.send(message);
  }
}

/** What failed to load, with the file and line esbuild or Node names. */
function describeLoadFailure(cause: unknown): string {
  const parts: string[] = [];
  let current: unknown = cause;
  while (current instanceof Error && parts.length < 4) {
    parts.push(current.message);
    current = current.cause;
  }
  return parts.length === 0 ? String(cause) : parts.join(': ');
}
