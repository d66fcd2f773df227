/**
 * The console's bulk work (a failure group's replay, a dead-letter queue's redrive) runs here, in the console's
 * process, not in the page: a reload, a closed tab or a second tab reads its progress back, and a cancel reaches it
 * wherever it was started from. Each job yields to the event loop between its steps, so the console keeps answering
 * while ten thousand messages move.
 */
import { setImmediate as nextTurn } from 'node:timers/promises';
import { describeError } from '../../errors.ts';

/** Where a job stands. */
export const JobState = {
  RUNNING: 'RUNNING',
  /** Cancel asked: the job finishes the step it is on, then stops. */
  CANCELLING: 'CANCELLING',
  DONE: 'DONE',
  CANCELLED: 'CANCELLED',
  /** It stopped on an error (the report says how far it got). */
  FAILED: 'FAILED',
} as const;

/** One of the {@link JobState} values. */
export type JobState = (typeof JobState)[keyof typeof JobState];

/** What kind of bulk work a job is. */
export type JobKind = 'replay' | 'redrive';

/** How far a job got: steps done of its total (when known), and its own counts (replayed, moved…). */
export interface JobProgress {
  /** Steps in all; for a redrive, the dead-letter queue's depth when it started (an estimate). */
  readonly total: number;
  readonly done: number;
  readonly counts: Readonly<Record<string, number>>;
}

/** A job as the page sees it. */
export interface JobSnapshot {
  readonly id: string;
  readonly kind: JobKind;
  /** What it does, in words. */
  readonly title: string;
  /** What it works on: a failure group's cause id, a queue. */
  readonly target: Readonly<Record<string, string>>;
  readonly reason: string;
  readonly actor: string;
  readonly ratePerSecond: number;
  readonly state: JobState;
  readonly startedAt: string;
  readonly endedAt?: string;
  readonly progress: JobProgress;
  /** What it did, once it has ended. */
  readonly report?: object;
  /** Why it stopped, when it failed. */
  readonly error?: string;
}

/** What a running job is given: the cancel signal and where it reports progress. */
export interface JobControl {
  /** Aborted when an operator cancels the job. */
  readonly signal: AbortSignal;
  progress(progress: JobProgress): void;
  /** Waits for the event loop to take its turn: every request that came meanwhile is answered first. */
  yieldTurn(): Promise<void>;
}

/** A job to start. */
export interface JobSpec {
  readonly kind: JobKind;
  readonly title: string;
  readonly target: Readonly<Record<string, string>>;
  readonly reason: string;
  readonly actor: string;
  readonly ratePerSecond: number;
  readonly total: number;
  /** The work; resolves with the report. A job that was cancelled resolves too, with what it did. */
  readonly run: (control: JobControl) => Promise<object>;
}

const DEFAULTS = {
  /** Ended jobs kept for the page to read back; the oldest go first. */
  keepEnded: 20,
} as const;

/** A job as the registry holds it. */
interface Job {
  snapshot: JobSnapshot;
  readonly abort: AbortController;
  readonly listeners: Set<(snapshot: JobSnapshot) => void>;
  readonly ended: Promise<void>;
}

/**
 * The console's jobs: started, read back, watched and cancelled by id.
 * @example
 * const jobs = new JobRegistry({ clock: () => new Date(), newId: ulid });
 * const job = jobs.start({ kind: 'replay', title, target, reason, actor, ratePerSecond: 10, total, run });
 */
export class JobRegistry {
  readonly #jobs = new Map<string, Job>();
  readonly #clock: () => Date;
  readonly #newId: () => string;
  readonly #keepEnded: number;

  constructor(options: {
    readonly clock: () => Date;
    readonly newId: () => string;
    readonly keepEnded?: number;
  }) {
    this.#clock = options.clock;
    this.#newId = options.newId;
    this.#keepEnded = options.keepEnded ?? DEFAULTS.keepEnded;
  }

  /** Starts `spec` and answers at once with its first snapshot; the work goes on in the background. */
  start(spec: JobSpec): JobSnapshot {
    const abort = new AbortController();
    const id = this.#newId();
    const listeners = new Set<(snapshot: JobSnapshot) => void>();
    const job: Job = {
      snapshot: {
        id,
        kind: spec.kind,
        title: spec.title,
        target: spec.target,
        reason: spec.reason,
        actor: spec.actor,
        ratePerSecond: spec.ratePerSecond,
        state: JobState.RUNNING,
        startedAt: this.#clock().toISOString(),
        progress: { total: spec.total, done: 0, counts: {} },
      },
      abort,
      listeners,
      ended: Promise.resolve(),
    };
    this.#jobs.set(id, job);
    const control: JobControl = {
      signal: abort.signal,
      progress: (progress) => this.#update(job, { progress }),
      yieldTurn: () => nextTurn(),
    };
    (job as { ended: Promise<void> }).ended = (async () => {
      // The request that started the job is answered before the first step.
      await nextTurn();
      try {
        const report = await spec.run(control);
        this.#update(job, {
          state: abort.signal.aborted ? JobState.CANCELLED : JobState.DONE,
          endedAt: this.#clock().toISOString(),
          report,
        });
      } catch (error) {
        this.#update(job, {
          state: JobState.FAILED,
          endedAt: this.#clock().toISOString(),
          error: describeError(error),
        });
      }
      this.#forgetOldest();
    })();
    return job.snapshot;
  }

  /** A job's snapshot; `undefined` for an id the console does not know (or forgot). */
  get(id: string): JobSnapshot | undefined {
    return this.#jobs.get(id)?.snapshot;
  }

  /** Every job the console holds, the newest first. */
  list(): JobSnapshot[] {
    return [...this.#jobs.values()].map((job) => job.snapshot).reverse();
  }

  /** Whether a job of `kind` on `target` runs now (one redrive of a queue at a time). */
  running(kind: JobKind, target: Readonly<Record<string, string>>): JobSnapshot | undefined {
    return this.list().find(
      (job) =>
        job.kind === kind &&
        isActive(job.state) &&
        Object.entries(target).every(([name, value]) => job.target[name] === value),
    );
  }

  /** Asks a running job to stop after its current step: its snapshot, `undefined` for an unknown id. */
  cancel(id: string): JobSnapshot | undefined {
    const job = this.#jobs.get(id);
    if (job === undefined) return undefined;
    if (job.snapshot.state === JobState.RUNNING) {
      job.abort.abort();
      this.#update(job, { state: JobState.CANCELLING });
    }
    return job.snapshot;
  }

  /** Calls `listener` with each new snapshot of the job until the returned function is called. */
  watch(id: string, listener: (snapshot: JobSnapshot) => void): () => void {
    const job = this.#jobs.get(id);
    if (job === undefined) return () => {};
    job.listeners.add(listener);
    return () => job.listeners.delete(listener);
  }

  /** Resolves when the job has ended (tests, and a console stopping). */
  async settled(id: string): Promise<JobSnapshot | undefined> {
    await this.#jobs.get(id)?.ended;
    return this.get(id);
  }

  /** Cancels every running job and waits for them to stop. */
  async stopAll(): Promise<void> {
    for (const job of this.#jobs.values()) this.cancel(job.snapshot.id);
    await Promise.all([...this.#jobs.values()].map((job) => job.ended));
  }

  #update(job: Job, change: Partial<JobSnapshot>): void {
    // A late progress report never undoes a cancel in progress.
    const state =
      change.state ?? (job.snapshot.state === JobState.CANCELLING ? JobState.CANCELLING : job.snapshot.state);
    job.snapshot = { ...job.snapshot, ...change, state };
    for (const listener of job.listeners) listener(job.snapshot);
  }

  #forgetOldest(): void {
    const ended = [...this.#jobs.values()].filter((job) => !isActive(job.snapshot.state));
    for (const job of ended.slice(0, Math.max(0, ended.length - this.#keepEnded))) {
      this.#jobs.delete(job.snapshot.id);
    }
  }
}

/** Whether a job in `state` is still running (or stopping). */
export function isActive(state: JobState): boolean {
  return state === JobState.RUNNING || state === JobState.CANCELLING;
}

/**
 * A pause that ends early when `signal` aborts: a job paced at one message a minute still stops at once.
 */
export function abortableSleep(
  sleep: (ms: number) => Promise<void>,
  signal: AbortSignal,
): (ms: number) => Promise<void> {
  return (ms) => {
    if (signal.aborted) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const done = () => {
        signal.removeEventListener('abort', done);
        resolve();
      };
      signal.addEventListener('abort', done, { once: true });
      sleep(ms).then(done, done);
    });
  };
}
