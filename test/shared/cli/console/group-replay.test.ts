/** A failure group's replay: paced, audited as the core's bulk replay is, and stopped cleanly by a cancel. */
import { beforeEach, describe, expect, it } from 'vitest';
import type { JobControl, JobProgress } from '../../../../shared/cli/console/bulk-jobs.ts';
import { replayGroup } from '../../../../shared/cli/console/group-replay.ts';
import { MessageStatus } from '../../../../shared/message/message-status.ts';
import { testMessageId } from '../../../support/factories.ts';
import { auditRows, storedMessage, storeMessage } from '../../admin/admin-fixture.ts';
import { type ConsoleFixture, consoleFixture, failedDelivery } from './console-fixture.ts';

let fixture: ConsoleFixture;
const base = {
  cause: 'InternalError: queue refused message <id> after <n> attempts',
  reason: 'loyalty fixed (INC-7)',
  actor: 'local:ana',
};

beforeEach(() => {
  fixture = consoleFixture();
});

/** A job's control as the registry gives it, recording progress; `cancelWhen` cancels on a progress report. */
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

async function seed(count: number): Promise<{ messageId: string; subscriber: string }[]> {
  const targets = [];
  for (let n = 1; n <= count; n += 1)
    targets.push({ messageId: await failedDelivery(fixture, n), subscriber: 'loyalty' });
  return targets;
}

const statusOf = async (messageId: string) =>
  (await storedMessage(fixture.admin, `${messageId}#loyalty`))?.status;

describe('replayGroup', () => {
  it('replays each delivery of the group, at most ratePerSecond a second, each audited as BULK_REPLAY of one run', async () => {
    const targets = await seed(5);

    const report = await replayGroup(fixture.admin.deps, { ...base, targets, ratePerSecond: 2 }, control());

    expect(report).toMatchObject({
      total: 5,
      replayed: 5,
      skipped: 0,
      failed: 0,
      notStarted: 0,
      cancelled: false,
    });
    for (const { messageId } of targets) expect(await statusOf(messageId)).toBe(MessageStatus.PENDING);
    // The first goes at once, each next one 1 / rate later.
    expect(fixture.admin.sleeps).toEqual([500, 500, 500, 500]);
    const [first] = targets;
    expect(await auditRows(fixture.admin, `message:${first?.messageId}`)).toEqual([
      expect.objectContaining({
        action: 'BULK_REPLAY',
        actor: 'local:ana',
        reason: base.reason,
        details: expect.objectContaining({ bulkId: report.bulkId, cause: base.cause, subscriber: 'loyalty' }),
      }),
    ]);
  });

  it('reports its progress before the first replay and after each one', async () => {
    const targets = await seed(3);
    const job = control();

    await replayGroup(fixture.admin.deps, { ...base, targets, ratePerSecond: 10 }, job);

    expect(job.reports.map(({ done, counts }) => [done, counts.replayed])).toEqual([
      [0, 0],
      [1, 1],
      [2, 2],
      [3, 3],
    ]);
  });

  it('stops after the replay in hand when cancelled: the rest stay FAILED and the report says so', async () => {
    const targets = await seed(5);

    const report = await replayGroup(
      fixture.admin.deps,
      { ...base, targets, ratePerSecond: 10 },
      control((progress) => progress.done === 2),
    );

    expect(report).toMatchObject({ replayed: 2, notStarted: 3, cancelled: true });
    expect(await Promise.all(targets.map(({ messageId }) => statusOf(messageId)))).toEqual([
      'PENDING',
      'PENDING',
      'FAILED',
      'FAILED',
      'FAILED',
    ]);
  });

  it('stops during a pause too: a slow rate does not hold a cancel back', async () => {
    const targets = await seed(3);
    const never = new Promise<void>(() => {});
    const deps = { ...fixture.admin.deps, sleep: () => never };

    const report = await replayGroup(
      deps,
      { ...base, targets, ratePerSecond: 0.001 },
      control((progress) => progress.done === 1),
    );

    expect(report).toMatchObject({ replayed: 1, notStarted: 2, cancelled: true });
  });

  it('skips what moved on since the group was read, and says why, grouped by cause', async () => {
    const targets = await seed(2);
    await storeMessage(fixture.admin, {
      messageId: `${testMessageId(3)}#loyalty`,
      subscriber: 'loyalty',
      status: MessageStatus.CONFIRMED,
    });
    const moved = [
      ...targets,
      { messageId: testMessageId(3), subscriber: 'loyalty' },
      { messageId: testMessageId(4), subscriber: 'loyalty' },
    ];

    const report = await replayGroup(
      fixture.admin.deps,
      { ...base, targets: moved, ratePerSecond: 10 },
      control(),
    );

    expect(report).toMatchObject({ replayed: 2, skipped: 2, failed: 0 });
    expect(report.problems).toEqual([
      expect.objectContaining({ outcome: 'skipped', kind: 'WrongStatusError', count: 1 }),
      expect.objectContaining({
        outcome: 'skipped',
        kind: 'MessageNotFoundError',
        count: 1,
        examples: [
          expect.objectContaining({
            messageId: testMessageId(4),
            error: expect.stringMatching(/no message/),
          }),
        ],
      }),
    ]);
  });

  it('refuses to start without a reason or with a rate beyond the core’s', async () => {
    const targets = await seed(1);

    await expect(
      replayGroup(fixture.admin.deps, { ...base, reason: ' ', targets, ratePerSecond: 1 }, control()),
    ).rejects.toThrow(/reason/);
    await expect(
      replayGroup(fixture.admin.deps, { ...base, targets, ratePerSecond: 5_000 }, control()),
    ).rejects.toThrow(/ratePerSecond/);
    expect(await statusOf(targets[0]?.messageId ?? '')).toBe('FAILED');
  });
});
