import { describe, expect, it } from 'vitest';
import {
  abortableSleep,
  type JobControl,
  JobRegistry,
  type JobSnapshot,
} from '../../../../shared/cli/console/bulk-jobs.ts';

/** `prefix1`, `prefix2`, … on each call. */
function counter(prefix: string): () => string {
  let n = 0;
  return () => {
    n += 1;
    return `${prefix}${n}`;
  };
}

function registry(): JobRegistry {
  return new JobRegistry({ clock: () => new Date('2026-12-01T04:00:00Z'), newId: counter('job-') });
}

const spec = {
  kind: 'replay' as const,
  title: 'replay 3',
  target: { cause: 'c1' },
  reason: 'fixed',
  actor: 'local:ana',
  ratePerSecond: 10,
  total: 3,
};

/** A job that does `steps` steps, each when `next()` is called, and reports after each. */
function steppedJob(steps: number) {
  const waiting: (() => void)[] = [];
  const next = async () => {
    while (waiting.length === 0) await new Promise((resolve) => setImmediate(resolve));
    waiting.shift()?.();
    await new Promise((resolve) => setImmediate(resolve));
  };
  const run = async (control: JobControl) => {
    let done = 0;
    for (; done < steps && !control.signal.aborted; ) {
      await new Promise<void>((resolve) => waiting.push(resolve));
      done += 1;
      control.progress({ total: steps, done, counts: { replayed: done } });
    }
    return { replayed: done };
  };
  return { run, next };
}

describe('JobRegistry', () => {
  it('answers at once with the running job, and reads its progress back by id while it runs', async () => {
    const jobs = registry();
    const { run, next } = steppedJob(3);

    const started = jobs.start({ ...spec, run });
    expect(started).toMatchObject({ id: 'job-1', state: 'RUNNING', progress: { total: 3, done: 0 } });
    await next();

    expect(jobs.get('job-1')).toMatchObject({
      state: 'RUNNING',
      progress: { done: 1, counts: { replayed: 1 } },
    });
    await next();
    await next();
    expect(await jobs.settled('job-1')).toMatchObject({
      state: 'DONE',
      report: { replayed: 3 },
      endedAt: '2026-12-01T04:00:00.000Z',
    });
  });

  it('cancels: CANCELLING until the job has stopped, then CANCELLED with what it did', async () => {
    const jobs = registry();
    const { run, next } = steppedJob(5);
    jobs.start({ ...spec, run });
    await next();

    expect(jobs.cancel('job-1')?.state).toBe('CANCELLING');
    await next();

    expect(await jobs.settled('job-1')).toMatchObject({ state: 'CANCELLED', report: { replayed: 2 } });
    expect(jobs.cancel('job-9')).toBeUndefined();
  });

  it('tells its watchers each new snapshot until they stop watching', async () => {
    const jobs = registry();
    const { run, next } = steppedJob(2);
    jobs.start({ ...spec, run });
    const seen: JobSnapshot[] = [];
    const unwatch = jobs.watch('job-1', (snapshot) => seen.push(snapshot));

    await next();
    unwatch();
    await next();
    await jobs.settled('job-1');

    expect(seen.map((snapshot) => snapshot.progress.done)).toEqual([1]);
  });

  it('keeps a failed job with its error', async () => {
    const jobs = registry();
    jobs.start({
      ...spec,
      run: async () => {
        throw new Error('AccessDenied: sqs:ReceiveMessage');
      },
    });

    expect(await jobs.settled('job-1')).toMatchObject({
      state: 'FAILED',
      error: 'Error: AccessDenied: sqs:ReceiveMessage',
    });
  });

  it('knows which job runs on a target, and forgets the oldest ended jobs past its bound', async () => {
    const jobs = new JobRegistry({ clock: () => new Date(0), newId: counter('job-'), keepEnded: 2 });
    const { run, next } = steppedJob(1);
    jobs.start({ ...spec, run });
    expect(jobs.running('replay', { cause: 'c1' })?.id).toBe('job-1');
    expect(jobs.running('replay', { cause: 'c2' })).toBeUndefined();
    await next();
    await jobs.settled('job-1');
    expect(jobs.running('replay', { cause: 'c1' })).toBeUndefined();

    for (let k = 0; k < 3; k += 1) await jobs.settled(jobs.start({ ...spec, run: async () => ({}) }).id);

    expect(jobs.list().map((job) => job.id)).toEqual(['job-4', 'job-3']);
  });
});

describe('abortableSleep', () => {
  it('ends a pause at once when the signal aborts, and pauses as asked otherwise', async () => {
    const abort = new AbortController();
    const paused: number[] = [];
    const sleep = abortableSleep(async (ms) => {
      paused.push(ms);
      await new Promise(() => {});
    }, abort.signal);

    const pause = sleep(60_000);
    abort.abort();
    await pause;
    await sleep(1_000);

    expect(paused).toEqual([60_000]);
  });
});
