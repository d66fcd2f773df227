/** A dead-letter queue's redrive from the console: the core's journalled redrive, with progress and a clean stop. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { JobControl, JobProgress } from '../../../../shared/cli/console/bulk-jobs.ts';
import { redriveDeadLetterQueue } from '../../../../shared/cli/console/dead-letter-redrive.ts';
import { testMessageId } from '../../../support/factories.ts';
import { auditRows } from '../../admin/admin-fixture.ts';
import {
  type ConsoleFixture,
  consoleFixture,
  deadLetter,
  LOYALTY_DLQ,
  LOYALTY_QUEUE,
} from './console-fixture.ts';

let fixture: ConsoleFixture;

beforeEach(async () => {
  fixture = consoleFixture();
  for (let n = 1; n <= 6; n += 1) await deadLetter(fixture, n);
});

function control(
  cancelWhen?: (progress: JobProgress) => boolean,
): JobControl & { readonly reports: JobProgress[] } {
  const abort = new AbortController();
  const reports: JobProgress[] = [];
  return {
    signal: abort.signal,
    reports,
    progress: (progress) => {
      reports.push(progress);
      if (cancelWhen?.(progress) === true) abort.abort();
    },
    yieldTurn: async () => {},
  };
}

const ids = (queueUrl: string) => fixture.admin.queues.peek(queueUrl).map((m) => m.attributes.message_id);
const input = {
  deadLetterQueueUrl: LOYALTY_DLQ,
  reason: 'points back',
  actor: 'local:ana',
  ratePerSecond: 4,
  expected: 6,
};

describe('redriveDeadLetterQueue', () => {
  it("moves a subscriber's dead letters back to its queue, paced, journalled in its stack's audit table", async () => {
    const job = control();

    const report = await redriveDeadLetterQueue({ kind: 'subscriber', deps: fixture.loyalty }, input, job);

    expect(report).toMatchObject({ moved: 6, left: 0, cancelled: false });
    expect(ids(LOYALTY_DLQ)).toEqual([]);
    expect(ids(LOYALTY_QUEUE).sort()).toEqual([1, 2, 3, 4, 5, 6].map((n) => testMessageId(n)));
    expect(fixture.admin.sleeps).toEqual([250, 250, 250, 250, 250]);
    expect(job.reports.at(-1)).toMatchObject({ total: 6, done: 6, counts: { moved: 6 } });
    expect(await auditRows(fixture.admin, `dlq:${LOYALTY_DLQ.split('/').at(-1)}`)).toEqual([
      expect.objectContaining({
        action: 'REDRIVE',
        reason: 'points back',
        details: expect.objectContaining({ moved: 6 }),
      }),
    ]);
  });

  it('stops cleanly when cancelled: it finishes the batch it received, receives no more, and leaves the rest visible', async () => {
    for (let n = 7; n <= 12; n += 1) await deadLetter(fixture, n);

    const report = await redriveDeadLetterQueue(
      { kind: 'subscriber', deps: fixture.loyalty },
      { ...input, expected: 12 },
      control((progress) => progress.counts.moved === 2),
    );

    // One receive takes ten messages; those are moved (at the same pace), the last two never received.
    expect(report).toMatchObject({ cancelled: true, moved: 10, examined: 10 });
    expect(ids(LOYALTY_QUEUE)).toHaveLength(10);
    expect(ids(LOYALTY_DLQ).sort()).toEqual([11, 12].map((n) => testMessageId(n)));
    expect(fixture.admin.queues.counts(LOYALTY_DLQ)).toMatchObject({ visible: 2, inFlight: 0 });
    expect(fixture.admin.sleeps).toHaveLength(9);
    expect(await auditRows(fixture.admin, `dlq:${LOYALTY_DLQ.split('/').at(-1)}`)).toEqual([
      expect.objectContaining({ action: 'REDRIVE', details: expect.objectContaining({ moved: 10 }) }),
    ]);
  });
});
