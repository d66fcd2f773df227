/**
 * A failure group of 10,000 deliveries replayed from the console on the in-memory backend, over HTTP as the page
 * does it: the console keeps answering while the job runs, its progress streams and is read back (a reload),
 * a cancel stops it cleanly, and a second replay of the group finishes the rest. The figures are printed.
 */
import { performance } from 'node:perf_hooks';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { JobSnapshot } from '../../../../shared/cli/console/bulk-jobs.ts';
import type { RunningConsole } from '../../../../shared/cli/console/console-server.ts';
import {
  type ConsoleClient,
  type ConsoleFixture,
  consoleFixture,
  failedDelivery,
  serve,
  signIn,
} from './console-fixture.ts';

const SIZE = 10_000;
const CAUSE = 'InternalError: loyalty queue refused the send';

let fixture: ConsoleFixture;
let running: RunningConsole;
let client: ConsoleClient;

beforeAll(async () => {
  fixture = consoleFixture();
  const seeded = performance.now();
  for (let n = 1; n <= SIZE; n += 1) await failedDelivery(fixture, n, `${CAUSE} (attempt ${n % 7})`);
  process.stdout.write(
    `bulk scale: seeded ${SIZE} FAILED deliveries in ${Math.round(performance.now() - seeded)} ms\n`,
  );
  running = await serve(fixture.context);
  client = await signIn(running);
}, 120_000);

afterAll(async () => {
  await running?.close();
});

// biome-ignore lint/suspicious/noExplicitAny: test assertions read response bodies freely.
const read = async (path: string): Promise<any> => {
  const response = await client.get(path);
  expect(response.status, path).toBe(200);
  return response.json();
};
const job = async (id: string): Promise<JobSnapshot> => (await read(`/api/jobs/${id}`)).job;

/** The snapshots a job's event stream sends until it ends. */
async function streamed(id: string): Promise<JobSnapshot[]> {
  const response = await client.get(`/api/jobs/${id}/events`);
  expect(response.headers.get('content-type')).toMatch(/^text\/event-stream/);
  const snapshots: JobSnapshot[] = [];
  const decoder = new TextDecoder();
  let text = '';
  for await (const chunk of response.body ?? [])
    text += decoder.decode(chunk as Uint8Array, { stream: true });
  for (const line of text.split('\n'))
    if (line.startsWith('data: ')) snapshots.push(JSON.parse(line.slice(6)));
  return snapshots;
}

describe(`a failure group of ${SIZE} deliveries, replayed from the console`, () => {
  let groupId: string;
  let cancelledAt: number;

  it('is one group', async () => {
    const failures = await read('/api/failures');

    expect(failures.total).toBe(SIZE);
    expect(failures.groups).toEqual([
      expect.objectContaining({
        kind: 'InternalError',
        message: 'loyalty queue refused the send (attempt <n>)',
        count: SIZE,
      }),
    ]);
    groupId = failures.groups[0].id;
  });

  it('replays while the console keeps answering, reads its progress back, and stops cleanly on cancel', async () => {
    const started = performance.now();
    const answer = await client.post('/api/failures/replay', {
      cause: groupId,
      reason: 'loyalty fixed (INC-21)',
      ratePerSecond: 1_000,
    });
    expect(answer.status).toBe(202);
    const { job: first } = (await answer.json()) as { job: JobSnapshot };
    expect(first).toMatchObject({ state: 'RUNNING', progress: { total: SIZE, done: 0 } });

    await expect
      .poll(async () => (await job(first.id)).progress.done, { timeout: 60_000, interval: 50 })
      .toBeGreaterThanOrEqual(2_000);
    // Pages read while it runs are answered: the overview counts through the indexes, the job is still running.
    const asked = performance.now();
    const overview = await read('/api/overview');
    const answeredMs = performance.now() - asked;
    const during = await job(first.id);
    expect(overview.stats.totals.FAILED + overview.stats.totals.PENDING).toBe(SIZE);
    expect(during.state).toBe('RUNNING');
    expect(during.progress.done).toBeLessThan(SIZE);

    // A reload: the list of jobs has it, with its progress.
    expect((await read('/api/jobs')).jobs).toEqual([
      expect.objectContaining({ id: first.id, state: 'RUNNING' }),
    ]);

    const cancel = await client.post(`/api/jobs/${first.id}/cancel`, {});
    expect(cancel.status).toBe(200);
    await expect
      .poll(async () => (await job(first.id)).state, { timeout: 30_000, interval: 20 })
      .toBe('CANCELLED');
    const cancelled = await job(first.id);
    const report = cancelled.report as { replayed: number; notStarted: number; cancelled: boolean };
    cancelledAt = report.replayed;
    expect(report).toMatchObject({ cancelled: true, skipped: 0, failed: 0 });
    expect(report.replayed + report.notStarted).toBe(SIZE);
    expect(report.notStarted).toBeGreaterThan(0);
    const left = await read('/api/failures');
    expect(left.total).toBe(SIZE - report.replayed);
    process.stdout.write(
      `bulk scale: ${report.replayed} replayed before the cancel in ${Math.round(performance.now() - started)} ms; ` +
        `the overview answered in ${Math.round(answeredMs)} ms meanwhile\n`,
    );
  });

  it('replays the rest of the group to the end, its progress streamed in far fewer events than steps', async () => {
    const started = performance.now();
    const answer = await client.post('/api/failures/replay', {
      cause: groupId,
      reason: 'loyalty fixed (INC-21)',
      ratePerSecond: 1_000,
    });
    const { job: second } = (await answer.json()) as { job: JobSnapshot };
    expect(second.progress.total).toBe(SIZE - cancelledAt);

    const events = await streamed(second.id);
    const elapsed = Math.round(performance.now() - started);

    expect(events.at(-1)).toMatchObject({
      state: 'DONE',
      report: { replayed: SIZE - cancelledAt, skipped: 0, failed: 0 },
    });
    expect(events.length).toBeGreaterThan(1);
    expect(events.length).toBeLessThan((SIZE - cancelledAt) / 10);
    const dones = events.map((event) => event.progress.done);
    expect(dones).toEqual([...dones].sort((a, b) => a - b));
    expect((await read('/api/failures')).total).toBe(0);
    expect((await read('/api/overview')).stats.totals.PENDING).toBe(SIZE);
    process.stdout.write(
      `bulk scale: the remaining ${SIZE - cancelledAt} replayed in ${elapsed} ms, ${events.length} progress events\n`,
    );
  });
});
