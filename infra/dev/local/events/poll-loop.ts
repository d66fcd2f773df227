/**
 * The loop both pollers share: run a cycle, again at once while there is work, every `intervalMs` when idle;
 * pause, resume, one cycle on demand (tests), and a stop that waits for the cycle in progress.
 */
import { setTimeout as sleep } from 'node:timers/promises';

/** What a cycle reports. */
export interface CycleResult {
  /** Records whose processing moved forward (delivered, filtered out, discarded). */
  readonly progressed: number;
  /** Nothing was waiting: no records, no messages. A failing batch that will be retried is not idle. */
  readonly idle: boolean;
}

/** Runs one poll; `flush` asks it not to wait for a batching window. */
export type Cycle = (options: {
  readonly flush: boolean;
  readonly signal: AbortSignal;
}) => Promise<CycleResult>;

/** Controls of a running poller. */
export interface PollControl {
  /** Starts the loop (idempotent). */
  start(): void;
  /** Stops polling after the cycle in progress; resolves when it has finished. */
  pause(): Promise<void>;
  /** Polls again after {@link pause}. */
  resume(): void;
  /** Runs one cycle now, without waiting for a batching window, after the cycle in progress. */
  pollOnce(): Promise<CycleResult>;
  /** Ends the loop for good; resolves when the cycle in progress has finished. */
  stop(): Promise<void>;
  readonly paused: boolean;
}

/** Counters of one poller, for the console and tests. */
export interface PollerStats {
  invocations: number;
  failedInvocations: number;
  /** Records (or messages) handed to the function, retries included. */
  records: number;
  /** Batches given up on (stream: sent to the on-failure queue). */
  discardedBatches: number;
}

/** A poller: a {@link PollControl} with a name, a description of its settings and counters. */
export interface Poller extends PollControl {
  /** Local name of the function it invokes. */
  readonly functionName: string;
  /** One line saying what it polls and with which settings. */
  readonly description: string;
  stats(): Readonly<PollerStats>;
}

/** Options of {@link createPollLoop}. */
export interface PollLoopOptions {
  readonly name: string;
  readonly cycle: Cycle;
  /** Pause between idle cycles. Lambda polls streams four times a second. @default 250 */
  readonly intervalMs?: number;
  readonly log?: (line: string) => void;
}

const DEFAULTS = { intervalMs: 250, maxErrorBackoffMs: 5_000 } as const;

/** A poll loop around `cycle`, not yet started. */
export function createPollLoop(options: PollLoopOptions): PollControl {
  const intervalMs = options.intervalMs ?? DEFAULTS.intervalMs;
  const log = options.log ?? (() => {});
  const stopping = new AbortController();
  let running: Promise<void> | undefined;
  let paused = false;
  let wake: AbortController = new AbortController();
  // Cycles run one at a time: the loop's and pollOnce()'s share the shard cursors / receipt handles.
  let tail: Promise<unknown> = Promise.resolve();
  let consecutiveErrors = 0;

  const enqueue = (flush: boolean): Promise<CycleResult> => {
    const next = tail.then(() => options.cycle({ flush, signal: stopping.signal }));
    tail = next.catch(() => {});
    return next;
  };

  const idleWait = async (ms: number): Promise<void> => {
    await sleep(ms, undefined, { signal: AbortSignal.any([stopping.signal, wake.signal]) }).catch(() => {});
  };

  const loop = async (): Promise<void> => {
    while (!stopping.signal.aborted) {
      if (paused) {
        await idleWait(60_000);
        continue;
      }
      try {
        const { progressed, idle } = await enqueue(false);
        consecutiveErrors = 0;
        // Straight on while work moves; otherwise wait, so a failing batch is not retried in a hot loop.
        if (idle || progressed === 0) await idleWait(intervalMs);
      } catch (error) {
        if (stopping.signal.aborted) break;
        consecutiveErrors += 1;
        // Log the first error of a run and then every tenth, so a dead emulator does not flood the console.
        if (consecutiveErrors === 1 || consecutiveErrors % 10 === 0) {
          log(`[${options.name}] poll failed (${consecutiveErrors}×): ${describe(error)}`);
        }
        await idleWait(
          Math.min(DEFAULTS.maxErrorBackoffMs, intervalMs * 2 ** Math.min(consecutiveErrors, 5)),
        );
      }
    }
  };

  return {
    start() {
      running ??= loop();
    },
    async pause() {
      paused = true;
      await tail;
    },
    resume() {
      paused = false;
      wake.abort();
      wake = new AbortController();
    },
    pollOnce: () => enqueue(true),
    async stop() {
      stopping.abort();
      await running;
      await tail;
    },
    get paused() {
      return paused;
    },
  };
}

function describe(error: unknown): string {
  return error instanceof Error ? `${error.name}: ${error.message}` : String(error);
}
