import { PutCommand, QueryCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidAdminRequestError, ReasonRequiredError } from '../../../shared/admin/admin-errors.ts';
import { type BulkReplayProgress, bulkReplay } from '../../../shared/admin/bulk-replay.ts';
import { dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { FIXED_NOW, testMessageId } from '../../support/factories.ts';
import {
  type AdminFixture,
  adminFixture,
  auditRows,
  commandNames,
  interceptedClient,
  storedMessage,
  storeMessage,
} from './admin-fixture.ts';

const { PENDING, FAILED, CANCELLED, CONFIRMED } = MessageStatus;
const id = testMessageId;
const actor = 'local:ana';
const reason = 'payments back up (INC-7)';
const minute = (n: number) => new Date(FIXED_NOW.getTime() + n * 60_000).toISOString();

let fixture: AdminFixture;

beforeEach(async () => {
  fixture = adminFixture();
  // order.created FAILED at minutes 1…6, one CANCELLED, one PENDING, and a FAILED message of another topic.
  for (let n = 1; n <= 6; n += 1)
    await storeMessage(fixture, { messageId: id(n), status: FAILED, createdAt: minute(n) });
  await storeMessage(fixture, { messageId: id(7), status: CANCELLED, createdAt: minute(3) });
  await storeMessage(fixture, { messageId: id(8), status: PENDING, createdAt: minute(3) });
  await storeMessage(fixture, {
    messageId: id(9),
    status: FAILED,
    createdAt: minute(3),
    topic: 'payment.captured',
  });
});

const statusOf = async (n: number) => (await storedMessage(fixture, id(n)))?.status;
const base = { topic: 'order.created', reason, actor, ratePerSecond: 5, dryRun: false };

describe('bulkReplay', () => {
  it("replays the topic's FAILED messages created in the range, oldest first, and leaves everything else", async () => {
    const report = await bulkReplay(fixture.deps, { ...base, from: minute(2), to: minute(5) });

    expect(report).toMatchObject({
      dryRun: false,
      total: 4,
      done: 4,
      replayed: 4,
      skipped: 0,
      failed: 0,
      problems: [],
    });
    for (const n of [2, 3, 4, 5]) expect(await statusOf(n)).toBe(PENDING);
    for (const n of [1, 6, 9]) expect(await statusOf(n)).toBe(FAILED);
    expect(await statusOf(7)).toBe(CANCELLED);
    const replayed = fixture.commands
      .filter((command): command is TransactWriteCommand => command instanceof TransactWriteCommand)
      .map((command) => command.input.TransactItems?.[0]?.Update?.Key?.messageId);
    expect(replayed).toEqual([2, 3, 4, 5].map(id));
  });

  it('files each replay as BULK_REPLAY with the run id, and the message history names the operator', async () => {
    const report = await bulkReplay(fixture.deps, { ...base, from: minute(1), to: minute(1) });

    expect(await auditRows(fixture, `message:${id(1)}`)).toEqual([
      expect.objectContaining({
        action: 'BULK_REPLAY',
        actor,
        reason,
        details: expect.objectContaining({ bulkId: report.bulkId }),
      }),
    ]);
    expect((await storedMessage(fixture, id(1)))?.history).toEqual([
      expect.objectContaining({ event: 'REPLAYED', by: actor, reason }),
    ]);
  });

  it('keeps to the rate: one replay per 1/rate seconds', async () => {
    const start = fixture.clock.now().getTime();

    await bulkReplay(fixture.deps, { ...base, ratePerSecond: 4 });

    expect(fixture.sleeps).toEqual([250, 250, 250, 250, 250]);
    expect(fixture.clock.now().getTime() - start).toBe(1_250);
  });

  it('replays CANCELLED messages of the range too when asked', async () => {
    const report = await bulkReplay(fixture.deps, {
      ...base,
      from: minute(3),
      to: minute(3),
      includeCancelled: true,
    });

    expect(report.replayed).toBe(2);
    expect(await statusOf(3)).toBe(PENDING);
    expect(await statusOf(7)).toBe(PENDING);
  });

  it('lists in a dry run what would be replayed and changes nothing', async () => {
    const before = fixture.db.items('outbox');

    const report = await bulkReplay(fixture.deps, { ...base, dryRun: true, to: minute(2) });

    expect(report).toEqual({
      dryRun: true,
      total: 2,
      done: 0,
      replayed: 0,
      skipped: 0,
      failed: 0,
      problems: [],
      wouldReplay: [
        { messageId: id(1), status: FAILED, createdAt: minute(1) },
        { messageId: id(2), status: FAILED, createdAt: minute(2) },
      ],
    });
    expect(fixture.db.items('outbox')).toEqual(before);
    expect(fixture.db.itemCount('audit')).toBe(0);
    expect(commandNames(fixture).every((name) => name === 'QueryCommand')).toBe(true);
  });

  it('finds the messages through the attention index only', async () => {
    await bulkReplay(fixture.deps, { ...base, dryRun: true });

    const queries = fixture.commands.filter(
      (command): command is QueryCommand => command instanceof QueryCommand,
    );
    expect(new Set(queries.map((query) => query.input.IndexName))).toEqual(new Set(['attention']));
    expect(commandNames(fixture)).not.toContain('ScanCommand');
  });

  it('reports progress before the first replay and after each one', async () => {
    const seen: BulkReplayProgress[] = [];

    await bulkReplay(fixture.deps, { ...base, to: minute(2), onProgress: (progress) => seen.push(progress) });

    expect(seen).toEqual([
      { total: 2, done: 0, replayed: 0, skipped: 0, failed: 0 },
      { total: 2, done: 1, replayed: 1, skipped: 0, failed: 0 },
      { total: 2, done: 2, replayed: 2, skipped: 0, failed: 0 },
    ]);
  });

  it('skips a message that moved on since it was found, and goes on with the others', async () => {
    let confirmedLate = false;
    const racing = interceptedClient(fixture, async (command) => {
      // A late delivery confirms message 2 while the run replays message 1.
      if (command instanceof TransactWriteCommand && !confirmedLate) {
        confirmedLate = true;
        const stored = await storedMessage(fixture, id(2));
        await fixture.db.send(
          new PutCommand({ TableName: 'outbox', Item: { ...stored, status: CONFIRMED } }),
        );
      }
    });

    const report = await bulkReplay(dynamoAdminDeps({ ...fixture.options, client: racing }), {
      ...base,
      to: minute(3),
    });

    expect(report).toMatchObject({ total: 3, replayed: 2, skipped: 1, failed: 0 });
    expect(report.problems).toEqual([{ messageId: id(2), error: expect.stringContaining('is CONFIRMED') }]);
    expect(await statusOf(3)).toBe(PENDING);
  });

  it('counts an error on one message as failed without stopping the run', async () => {
    const flaky = interceptedClient(fixture, (command) => {
      const key = command instanceof TransactWriteCommand && command.input.TransactItems?.[0]?.Update?.Key;
      if (key && key.messageId === id(1)) throw new Error('ProvisionedThroughputExceededException');
    });

    const report = await bulkReplay(dynamoAdminDeps({ ...fixture.options, client: flaky }), {
      ...base,
      to: minute(2),
    });

    expect(report).toMatchObject({ replayed: 1, failed: 1, skipped: 0 });
    expect(report.problems).toEqual([
      { messageId: id(1), error: 'Error: ProvisionedThroughputExceededException' },
    ]);
  });

  it.each([
    {
      input: { from: minute(5), to: minute(1) },
      error: InvalidAdminRequestError,
      text: /from must not be after to/,
    },
    { input: { ratePerSecond: 0 }, error: InvalidAdminRequestError, text: /ratePerSecond/ },
    { input: { ratePerSecond: Number.NaN }, error: InvalidAdminRequestError, text: /ratePerSecond/ },
    {
      input: { from: 'last tuesday' },
      error: InvalidAdminRequestError,
      text: /from must be an ISO-8601 instant/,
    },
    { input: { topic: '' }, error: InvalidAdminRequestError, text: /topic is required/ },
    { input: { reason: '' }, error: ReasonRequiredError, text: /replay needs a reason/ },
  ])('refuses $text before touching anything', async ({ input, error, text }) => {
    await expect(bulkReplay(fixture.deps, { ...base, ...input })).rejects.toThrow(error);
    await expect(bulkReplay(fixture.deps, { ...base, ...input })).rejects.toThrow(text);
    expect(fixture.commands).toEqual([]);
  });
});
