import { GetCommand, PutCommand, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  InvalidAdminRequestError,
  MessageNotFoundError,
  ReasonRequiredError,
  WrongStatusError,
} from '../../../shared/admin/admin-errors.ts';
import { cancelMessage, replayMessage } from '../../../shared/admin/message-actions.ts';
import { showMessage } from '../../../shared/admin/show-message.ts';
import { dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { dueShardOf } from '../../../shared/outbox/outbox-item.ts';
import { FIXED_NOW, testMessageId } from '../../support/factories.ts';
import {
  type AdminFixture,
  adminFixture,
  auditRows,
  interceptedClient,
  ORDER_QUEUE,
  pipeline,
  SHARDS,
  storedMessage,
  storeMessage,
} from './admin-fixture.ts';

const { PENDING, SENT, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
const messageId = testMessageId(5);
const actor = 'arn:aws:iam::123456789012:user/ana';
const reason = 'inventory service fixed (INC-42)';

let fixture: AdminFixture;

beforeEach(async () => {
  fixture = adminFixture();
  await fixture.db.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 10 } }));
});

const stock = async () => {
  const { Item } = await fixture.db.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
  return (Item as { available: number }).available;
};
const transactions = () =>
  fixture.commands.filter(
    (command): command is TransactWriteCommand => command instanceof TransactWriteCommand,
  );

describe('replayMessage', () => {
  it('moves a FAILED message to PENDING, due now, with its history entry and audit row in ONE transaction', async () => {
    await storeMessage(fixture, { messageId, status: FAILED, attempts: 10, resends: 3 });
    fixture.clock.advance(60_000);

    const result = await replayMessage(fixture.deps, { messageId, reason, actor });

    expect(result).toEqual({
      messageId,
      action: 'REPLAY',
      from: FAILED,
      to: PENDING,
      topic: 'order.created',
      aggregateId: 'order-1',
      at: fixture.clock.now().toISOString(),
      actionId: expect.any(String),
    });
    expect(transactions()).toHaveLength(1);
    const items = transactions()[0]?.input.TransactItems ?? [];
    expect(items.map((item) => (item.Update ?? item.Put)?.TableName)).toEqual(['outbox', 'audit']);
    expect(transactions()[0]?.input.ClientRequestToken).toBe(result.actionId);

    const stored = await storedMessage(fixture, messageId);
    expect(stored).toMatchObject({
      status: PENDING,
      attempts: 0,
      resends: 0,
      nextAttemptAt: fixture.clock.now().toISOString(),
      dueShard: dueShardOf(messageId, SHARDS),
    });
    expect(stored).not.toHaveProperty('attentionKey');
    expect(stored?.history).toEqual([
      { at: result.at, event: 'REPLAYED', from: FAILED, to: PENDING, by: actor, reason },
    ]);
    expect(await auditRows(fixture, `message:${messageId}`)).toEqual([
      {
        subject: `message:${messageId}`,
        actionId: result.actionId,
        at: result.at,
        action: 'REPLAY',
        actor,
        reason,
        details: { from: FAILED, to: PENDING, topic: 'order.created', aggregateId: 'order-1' },
      },
    ]);
  });

  it('leads a replayed FAILED message to CONFIRMED: the next sweep sends it and the consumer applies it once', async () => {
    await storeMessage(fixture, { messageId, status: FAILED, attempts: 10 });
    const flow = pipeline(fixture);
    // Before the replay, nothing sends a FAILED message.
    expect((await flow.sweepOnce()).sent).toBe(0);

    await replayMessage(fixture.deps, { messageId, reason, actor });
    const report = await flow.sweepOnce();
    const [applied] = await flow.deliverAll();

    expect(report.sent).toBe(1);
    expect(applied).toMatchObject({ kind: 'APPLIED', confirmation: 'CONFIRMED' });
    expect(await stock()).toBe(8);
    expect(await storedMessage(fixture, messageId)).toMatchObject({ status: CONFIRMED, outcome: 'APPLIED' });
    // A second copy (a redrive, a duplicate delivery) changes nothing.
    const stored = (await storedMessage(fixture, messageId)) ?? {};
    expect((await flow.consume(stored as never)).kind).toBe('DUPLICATE');
    expect(await stock()).toBe(8);
    const { history } = await showMessage(fixture.deps, messageId);
    expect(history.map((entry) => `${entry.event} by ${entry.by}`)).toEqual([
      `REPLAYED by ${actor}`,
      'SENT by sweeper',
      'CONFIRMED by consumer',
    ]);
  });

  it('replays a CANCELLED message: the cancel is undone and it no longer expires', async () => {
    await storeMessage(fixture, { messageId, status: CANCELLED });

    const result = await replayMessage(fixture.deps, { messageId, reason, actor });

    expect(result).toMatchObject({ from: CANCELLED, to: PENDING });
    const stored = await storedMessage(fixture, messageId);
    expect(stored?.status).toBe(PENDING);
    expect(stored).not.toHaveProperty('expiresAt');
  });

  it.each([PENDING, SENT, CONFIRMED])(
    'refuses a %s message with a 409 naming its status, and changes nothing',
    async (status) => {
      await storeMessage(fixture, { messageId, status });
      const before = await storedMessage(fixture, messageId);

      const error = await replayMessage(fixture.deps, { messageId, reason, actor }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(WrongStatusError);
      expect(error).toMatchObject({ httpStatus: 409, code: 'WRONG_STATUS', status });
      expect((error as Error).message).toBe(
        `message ${messageId} is ${status}; replay needs FAILED or CANCELLED`,
      );
      expect(transactions()).toEqual([]);
      expect(await storedMessage(fixture, messageId)).toEqual(before);
    },
  );

  it.each([undefined, '', '   '])(
    'refuses a missing reason (%j) with a 400 before reading anything',
    async (missing) => {
      await storeMessage(fixture, { messageId, status: FAILED });

      const error = await replayMessage(fixture.deps, {
        messageId,
        reason: missing as unknown as string,
        actor,
      }).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ReasonRequiredError);
      expect(error).toMatchObject({ httpStatus: 400, code: 'REASON_REQUIRED' });
      expect(fixture.commands).toEqual([]);
    },
  );

  it('refuses an action without an actor', async () => {
    await expect(replayMessage(fixture.deps, { messageId, reason, actor: ' ' })).rejects.toBeInstanceOf(
      InvalidAdminRequestError,
    );
  });

  it('answers 404 for a message that does not exist', async () => {
    const error = await replayMessage(fixture.deps, { messageId, reason, actor }).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(MessageNotFoundError);
    expect(error).toMatchObject({ httpStatus: 404, messageId });
  });

  it('reads again when the message changes between its read and the write, and refuses on the new status', async () => {
    await storeMessage(fixture, { messageId, status: FAILED });
    let raced = false;
    const racing = interceptedClient(fixture, async (command) => {
      // A late delivery confirms the message just before the operator's transaction lands.
      if (command instanceof TransactWriteCommand && !raced) {
        raced = true;
        const stored = await storedMessage(fixture, messageId);
        await fixture.db.send(
          new PutCommand({ TableName: 'outbox', Item: { ...stored, status: CONFIRMED } }),
        );
      }
    });

    const error = await replayMessage(dynamoAdminDeps({ ...fixture.options, client: racing }), {
      messageId,
      reason,
      actor,
    }).catch((e: unknown) => e);

    expect(error).toMatchObject({ status: CONFIRMED, httpStatus: 409 });
    expect(await auditRows(fixture, `message:${messageId}`)).toEqual([]);
  });
});

describe('cancelMessage', () => {
  it('cancels a PENDING message: out of the due index, CANCELLED in the attention index, expiring, audited', async () => {
    await storeMessage(fixture, { messageId, status: PENDING, leaseOwner: 'sweeper-x', leaseUntil: 'soon' });

    const result = await cancelMessage(fixture.deps, { messageId, reason: 'order withdrawn', actor });

    expect(result).toMatchObject({ action: 'CANCEL', from: PENDING, to: CANCELLED });
    const stored = await storedMessage(fixture, messageId);
    expect(stored).toMatchObject({
      status: CANCELLED,
      attentionKey: `CANCELLED#${dueShardOf(messageId, SHARDS)}`,
      expiresAt: Math.floor(FIXED_NOW.getTime() / 1000) + 30 * 86_400,
    });
    for (const gone of ['dueShard', 'nextAttemptAt', 'leaseOwner', 'leaseUntil'])
      expect(stored).not.toHaveProperty(gone);
    expect(await auditRows(fixture, `message:${messageId}`)).toEqual([
      expect.objectContaining({ action: 'CANCEL', actor, reason: 'order withdrawn' }),
    ]);
  });

  it('keeps a cancelled PENDING message from the sweeper for good', async () => {
    await storeMessage(fixture, { messageId, status: PENDING });
    await cancelMessage(fixture.deps, { messageId, reason: 'order withdrawn', actor });
    const flow = pipeline(fixture);

    for (const elapse of [0, 60_000, 3_600_000, 86_400_000]) {
      fixture.clock.advance(elapse);
      expect((await flow.sweepOnce()).claimed).toBe(0);
    }
    expect(fixture.queues.depth(ORDER_QUEUE)).toBe(0);
    expect((await storedMessage(fixture, messageId))?.status).toBe(CANCELLED);
  });

  it('records a copy in flight that lands after the cancel: applied, APPLIED_AFTER_CANCEL in the history, still CANCELLED', async () => {
    const sent = await storeMessage(fixture, { messageId, status: PENDING });
    await cancelMessage(fixture.deps, { messageId, reason: 'order withdrawn', actor });

    const late = await pipeline(fixture).consume(sent);
    const again = await pipeline(fixture).consume(sent);

    expect(late).toMatchObject({ kind: 'APPLIED', confirmation: 'APPLIED_AFTER_CANCEL' });
    expect(again).toMatchObject({ kind: 'DUPLICATE', confirmation: 'APPLIED_AFTER_CANCEL' });
    expect(await stock()).toBe(8);
    const { message, history } = await showMessage(fixture.deps, messageId);
    expect(message).toMatchObject({ status: CANCELLED, outcome: 'APPLIED' });
    expect(history.map(({ event, by, outcome }) => ({ event, by, outcome }))).toEqual([
      { event: 'CANCELLED', by: actor, outcome: undefined },
      { event: 'APPLIED_AFTER_CANCEL', by: 'consumer', outcome: 'APPLIED' },
    ]);
  });

  it('cancels a FAILED message, which then expires instead of waiting for an operator', async () => {
    await storeMessage(fixture, { messageId, status: FAILED });

    await expect(
      cancelMessage(fixture.deps, { messageId, reason: 'obsolete', actor }),
    ).resolves.toMatchObject({
      from: FAILED,
      to: CANCELLED,
    });
    expect(await storedMessage(fixture, messageId)).toMatchObject({
      attentionKey: `CANCELLED#${dueShardOf(messageId, SHARDS)}`,
      expiresAt: expect.any(Number),
    });
  });

  it.each([SENT, CONFIRMED, CANCELLED])(
    'refuses a %s message with a 409 naming its status',
    async (status) => {
      await storeMessage(fixture, { messageId, status });

      await expect(cancelMessage(fixture.deps, { messageId, reason: 'r', actor })).rejects.toThrow(
        `message ${messageId} is ${status}; cancel needs PENDING or FAILED`,
      );
      expect(transactions()).toEqual([]);
    },
  );

  it('refuses a missing reason with a 400 and changes nothing', async () => {
    await storeMessage(fixture, { messageId, status: PENDING });

    await expect(cancelMessage(fixture.deps, { messageId, reason: '', actor })).rejects.toBeInstanceOf(
      ReasonRequiredError,
    );
    expect((await storedMessage(fixture, messageId))?.status).toBe(PENDING);
  });
});

describe('showMessage', () => {
  it('shows the full record with its payload, its history and its audit rows', async () => {
    await storeMessage(fixture, { messageId, status: FAILED });
    const replay = await replayMessage(fixture.deps, { messageId, reason, actor });
    const cancel = await cancelMessage(fixture.deps, { messageId, reason: 'changed my mind', actor });

    const shown = await showMessage(fixture.deps, messageId);

    expect(shown.message).toMatchObject({ messageId, status: CANCELLED, payload: { orderId: 'order-1' } });
    expect(shown.history.map((entry) => entry.event)).toEqual(['REPLAYED', 'CANCELLED']);
    expect(shown.audit.map((row) => [row.action, row.actionId])).toEqual([
      ['REPLAY', replay.actionId],
      ['CANCEL', cancel.actionId],
    ]);
    expect(fixture.commands.filter((command) => command instanceof GetCommand).at(-1)).toMatchObject({
      input: { ConsistentRead: true },
    });
  });

  it('answers 404 for an unknown message', async () => {
    await expect(showMessage(fixture.deps, messageId)).rejects.toBeInstanceOf(MessageNotFoundError);
  });
});
