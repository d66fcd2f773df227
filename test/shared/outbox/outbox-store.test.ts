import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, UpdateCommand, type UpdateCommandInput } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { dueShardOf } from '../../../shared/outbox/outbox-item.ts';
import { confirmDeadlineAfter, MAX_CONFIRM_DEADLINE_MS } from '../../../shared/outbox/outbox-store.ts';
import type { SendFailureDecision } from '../../../shared/retry/send-failure-decision.ts';
import { FIXED_NOW, outboxItem, testMessageId } from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
const store = new DynamoOutboxStore({ client, tableName: 'outbox' });
const messageId = testMessageId(7);

function conditionFailed(item?: object): ConditionalCheckFailedException {
  return new ConditionalCheckFailedException({
    message: 'The conditional request failed',
    $metadata: {},
    ...(item === undefined ? {} : { Item: marshall(item, { removeUndefinedValues: true }) }),
  });
}

function sentUpdate(): UpdateCommandInput {
  const calls = ddb.commandCalls(UpdateCommand);
  expect(calls).toHaveLength(1);
  const input = calls[0]?.args[0].input;
  if (input === undefined) throw new Error('no UpdateCommand sent');
  return input;
}

/** The attributes an update SETs (attribute → value expression) and REMOVEs, with placeholders resolved. */
function clausesOf(input: UpdateCommandInput): { set: Record<string, string>; remove: string[] } {
  const names = input.ExpressionAttributeNames ?? {};
  const resolve = (token: string) => names[token.trim()] ?? token.trim();
  const expression = input.UpdateExpression ?? '';
  const setPart = /SET (.*?)(?= REMOVE |$)/.exec(expression)?.[1] ?? '';
  const removePart = /REMOVE (.*?)(?= SET |$)/.exec(expression)?.[1] ?? '';
  const set: Record<string, string> = {};
  for (const assignment of setPart.split(/,(?![^(]*\))/)) {
    const [target, value] = assignment.split('=');
    if (target !== undefined && value !== undefined) set[resolve(target)] = value.trim();
  }
  const remove = removePart ? removePart.split(',').map(resolve) : [];
  return { set, remove };
}

/** The status values an update's condition accepts. */
function acceptedStatuses(input: UpdateCommandInput): unknown[] {
  const list = /#status IN \(([^)]*)\)/.exec(input.ConditionExpression ?? '')?.[1] ?? '';
  return list.split(',').map((token) => input.ExpressionAttributeValues?.[token.trim()]);
}

/** DynamoDB refuses undefined and unused placeholders, and a path both SET and REMOVEd. */
function expectWellFormed(input: UpdateCommandInput): void {
  const text = `${input.UpdateExpression} ${input.ConditionExpression ?? ''}`;
  const usedNames = new Set(text.match(/#\w+/g));
  const usedValues = new Set(text.match(/:\w+/g));
  expect(new Set(Object.keys(input.ExpressionAttributeNames ?? {}))).toEqual(usedNames);
  expect(new Set(Object.keys(input.ExpressionAttributeValues ?? {}))).toEqual(usedValues);
  const { set, remove } = clausesOf(input);
  expect(remove.filter((name) => name in set)).toEqual([]);
}

beforeEach(() => {
  ddb.reset();
  ddb.on(UpdateCommand).resolves({});
});

describe('DynamoOutboxStore.markSent', () => {
  it('sends an UpdateCommand conditioned on the message existing and being PENDING', async () => {
    await expect(store.markSent({ messageId: messageId, now: FIXED_NOW })).resolves.toBe('SENT');

    const input = sentUpdate();
    expect(input.TableName).toBe('outbox');
    expect(input.Key).toEqual({ messageId });
    expect(input.ConditionExpression).toContain('attribute_exists(#messageId)');
    expect(acceptedStatuses(input)).toEqual(['PENDING']);
    expectWellFormed(input);
  });

  it('moves the message to SENT, stamps sentAt and the confirmation deadline, and leaves its due-index key alone', async () => {
    await store.markSent({ messageId: messageId, now: FIXED_NOW });

    const input = sentUpdate();
    const { set, remove } = clausesOf(input);
    const values = input.ExpressionAttributeValues ?? {};
    expect(values[set.status ?? '']).toBe('SENT');
    expect(values[set.sentAt ?? '']).toBe(FIXED_NOW.toISOString());
    // Default confirmation deadline: 5 minutes.
    expect(values[set.confirmBy ?? '']).toBe('2024-05-01T12:05:00.000Z');
    // Moving nextAttemptAt would delete and re-put the message's due-index entry on every send.
    expect(set).not.toHaveProperty('nextAttemptAt');
    expect(set.attempts).toMatch(/if_not_exists\(#attempts, :zero\) \+ :one/);
    expect(remove).toEqual(expect.arrayContaining(['leaseOwner', 'leaseUntil']));
    expect(remove).not.toContain('dueShard');
  });

  it('appends a SENT entry by its actor to the history', async () => {
    const sweeper = new DynamoOutboxStore({ client, tableName: 'outbox', actor: 'sweeper' });

    await sweeper.markSent({ messageId: messageId, now: FIXED_NOW });

    const input = sentUpdate();
    expect(input.ExpressionAttributeValues?.[':historyEntry']).toEqual([
      { at: FIXED_NOW.toISOString(), event: 'SENT', from: 'PENDING', to: 'SENT', by: 'sweeper' },
    ]);
    expect(input.ExpressionAttributeValues?.[':noHistory']).toEqual([]);
    expectWellFormed(input);
  });

  it('uses the configured confirmation deadline', async () => {
    const custom = new DynamoOutboxStore({ client, tableName: 'outbox', confirmDeadlineMs: 1_000 });

    await custom.markSent({ messageId: messageId, now: FIXED_NOW });

    expect(sentUpdate().ExpressionAttributeValues?.[':deadline']).toBe('2024-05-01T12:00:01.000Z');
  });

  it('returns ALREADY_ADVANCED when the condition fails (a sweeper or a confirmation was first)', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed(outboxItem({ messageId, status: 'CONFIRMED' })));

    await expect(store.markSent({ messageId: messageId, now: FIXED_NOW })).resolves.toBe('ALREADY_ADVANCED');
  });

  it('throws any other DynamoDB error', async () => {
    ddb.on(UpdateCommand).rejects(new Error('ProvisionedThroughputExceeded'));

    await expect(store.markSent({ messageId: messageId, now: FIXED_NOW })).rejects.toThrow(
      'ProvisionedThroughputExceeded',
    );
  });
});

describe('DynamoOutboxStore.recordSendFailure', () => {
  const retry: SendFailureDecision = {
    kind: 'retry',
    attempts: 2,
    nextAttemptAt: new Date('2024-05-01T12:00:30.000Z'),
  };
  const fail: SendFailureDecision = { kind: 'fail', attempts: 10 };

  it('schedules a retry: attempts, nextAttemptAt and lastError set, status stays PENDING', async () => {
    await expect(
      store.recordSendFailure({
        messageId,
        seenAttempts: 1,
        decision: retry,
        error: 'Throttled: slow down',
        now: FIXED_NOW,
      }),
    ).resolves.toBe('RETRY_SCHEDULED');

    const input = sentUpdate();
    const { set, remove } = clausesOf(input);
    const values = input.ExpressionAttributeValues ?? {};
    expect(values[set.status ?? '']).toBe('PENDING');
    expect(values[set.attempts ?? '']).toBe(2);
    expect(values[set.nextAttemptAt ?? '']).toBe('2024-05-01T12:00:30.000Z');
    expect(values[set.lastError ?? '']).toBe('Throttled: slow down');
    expect(remove).not.toContain('dueShard');
    expect(acceptedStatuses(input)).toEqual(['PENDING']);
    expectWellFormed(input);
  });

  it('is conditioned on nobody having recorded an attempt since the one seen, so attempts are never double-counted', async () => {
    await store.recordSendFailure({
      messageId,
      seenAttempts: 1,
      decision: retry,
      error: 'e',
      now: FIXED_NOW,
    });

    const input = sentUpdate();
    expect(input.ConditionExpression).toContain('#attempts = :seen');
    expect(input.ExpressionAttributeValues?.[':seen']).toBe(1);
  });

  it('moves the message to FAILED: leaves the due index, keeps lastError and attempts', async () => {
    await expect(
      store.recordSendFailure({
        messageId,
        seenAttempts: 9,
        decision: fail,
        error: 'QueueDoesNotExist',
        now: FIXED_NOW,
      }),
    ).resolves.toBe('FAILED');

    const input = sentUpdate();
    const { set, remove } = clausesOf(input);
    const values = input.ExpressionAttributeValues ?? {};
    expect(values[set.status ?? '']).toBe('FAILED');
    expect(values[set.attempts ?? '']).toBe(10);
    expect(values[set.lastError ?? '']).toBe('QueueDoesNotExist');
    expect(remove).toEqual(expect.arrayContaining(['dueShard', 'nextAttemptAt']));
    expect(remove).not.toContain('lastError');
    // A FAILED message is never archived: an operator must see it.
    expect(set).not.toHaveProperty('expiresAt');
    expectWellFormed(input);
  });

  it('files a FAILED message in the attention index under its due shard, with a FAILED history entry by its actor', async () => {
    const relay = new DynamoOutboxStore({ client, tableName: 'outbox', dueShards: 4, actor: 'relay' });

    await relay.recordSendFailure({
      messageId,
      seenAttempts: 9,
      decision: fail,
      error: 'Gone',
      now: FIXED_NOW,
    });

    const input = sentUpdate();
    const { set } = clausesOf(input);
    const values = input.ExpressionAttributeValues ?? {};
    expect(values[set.attentionKey ?? '']).toBe(`FAILED#${dueShardOf(messageId, 4)}`);
    expect(set.history).toBe('list_append(if_not_exists(#history, :noHistory), :historyEntry)');
    expect(values[':historyEntry']).toEqual([
      {
        at: FIXED_NOW.toISOString(),
        event: 'FAILED',
        from: 'PENDING',
        to: 'FAILED',
        by: 'relay',
        reason: 'Gone',
      },
    ]);
  });

  it('writes no history for a retry that keeps the message PENDING', async () => {
    await store.recordSendFailure({
      messageId,
      seenAttempts: 1,
      decision: retry,
      error: 'e',
      now: FIXED_NOW,
    });

    const { set } = clausesOf(sentUpdate());
    expect(set).not.toHaveProperty('history');
    expect(set).not.toHaveProperty('attentionKey');
  });

  it('truncates a long error to 1 000 characters', async () => {
    await store.recordSendFailure({
      messageId,
      seenAttempts: 0,
      decision: retry,
      error: 'x'.repeat(5_000),
      now: FIXED_NOW,
    });

    expect(sentUpdate().ExpressionAttributeValues?.[':error']).toHaveLength(1_000);
  });

  it('returns ALREADY_ADVANCED when the message moved on meanwhile', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed(outboxItem({ messageId, status: 'SENT', attempts: 1 })));

    await expect(
      store.recordSendFailure({ messageId, seenAttempts: 0, decision: fail, error: 'e', now: FIXED_NOW }),
    ).resolves.toBe('ALREADY_ADVANCED');
  });
});

describe('DynamoOutboxStore.confirm', () => {
  it('moves PENDING, SENT or FAILED to CONFIRMED', async () => {
    await expect(store.confirm(messageId, FIXED_NOW)).resolves.toBe('CONFIRMED');

    const input = sentUpdate();
    expect(input.Key).toEqual({ messageId });
    expect(acceptedStatuses(input)).toEqual(['PENDING', 'SENT', 'FAILED']);
    expect(input.ReturnValuesOnConditionCheckFailure).toBe('ALL_OLD');
    expectWellFormed(input);
  });

  it('sets the TTL 30 days out and removes the due-index keys', async () => {
    await store.confirm(messageId, FIXED_NOW);

    const input = sentUpdate();
    const { set, remove } = clausesOf(input);
    const values = input.ExpressionAttributeValues ?? {};
    expect(values[set.status ?? '']).toBe('CONFIRMED');
    expect(values[set.confirmedAt ?? '']).toBe(FIXED_NOW.toISOString());
    expect(values[set.expiresAt ?? '']).toBe(FIXED_NOW.getTime() / 1000 + 30 * 86_400);
    expect(remove).toEqual(expect.arrayContaining(['dueShard', 'nextAttemptAt']));
  });

  it('uses the configured retention', async () => {
    const custom = new DynamoOutboxStore({ client, tableName: 'outbox', retentionDays: 1 });

    await custom.confirm(messageId, FIXED_NOW);

    expect(sentUpdate().ExpressionAttributeValues?.[':expiresAt']).toBe(FIXED_NOW.getTime() / 1000 + 86_400);
  });

  it('returns ALREADY_CONFIRMED when the old item is CONFIRMED', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed(outboxItem({ messageId, status: 'CONFIRMED' })));

    await expect(store.confirm(messageId, FIXED_NOW)).resolves.toBe('ALREADY_CONFIRMED');
  });

  it('records the confirmation of a CANCELLED message as APPLIED_AFTER_CANCEL, keeping the status (a copy in flight may land after a cancel)', async () => {
    ddb
      .on(UpdateCommand)
      .rejectsOnce(conditionFailed(outboxItem({ messageId, status: 'CANCELLED' })))
      .resolves({});
    const consumer = new DynamoOutboxStore({ client, tableName: 'outbox', actor: 'consumer' });

    await expect(consumer.confirm(messageId, FIXED_NOW, 'APPLIED')).resolves.toBe('APPLIED_AFTER_CANCEL');

    const late = ddb.commandCalls(UpdateCommand)[1]?.args[0].input;
    if (late === undefined) throw new Error('no second UpdateCommand');
    expect(late.ConditionExpression).toBe(
      'attribute_exists(#messageId) AND #status = :cancelled AND attribute_not_exists(#confirmedAt)',
    );
    const { set } = clausesOf(late);
    expect(set).not.toHaveProperty('status');
    expect(late.ExpressionAttributeValues?.[set.outcome ?? '']).toBe('APPLIED');
    expect(late.ExpressionAttributeValues?.[':historyEntry']).toEqual([
      {
        at: FIXED_NOW.toISOString(),
        event: 'APPLIED_AFTER_CANCEL',
        from: 'CANCELLED',
        to: 'CANCELLED',
        by: 'consumer',
        outcome: 'APPLIED',
      },
    ]);
    expectWellFormed(late);
  });

  it('answers APPLIED_AFTER_CANCEL again for a redelivered copy without recording it twice', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed(outboxItem({ messageId, status: 'CANCELLED' })));

    await expect(store.confirm(messageId, FIXED_NOW, 'APPLIED')).resolves.toBe('APPLIED_AFTER_CANCEL');
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(2);
  });

  it('confirms a cancelled message that an operator replayed between its two updates', async () => {
    ddb
      .on(UpdateCommand)
      .rejectsOnce(conditionFailed(outboxItem({ messageId, status: 'CANCELLED' })))
      .rejectsOnce(conditionFailed(outboxItem({ messageId, status: 'PENDING' })))
      .resolves({});

    await expect(store.confirm(messageId, FIXED_NOW, 'APPLIED')).resolves.toBe('CONFIRMED');
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(3);
  });

  it('returns NOT_CONFIRMABLE for a status no confirmation leaves', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed(outboxItem({ messageId, status: 'ARCHIVED' as 'SENT' })));

    await expect(store.confirm(messageId, FIXED_NOW)).resolves.toBe('NOT_CONFIRMABLE');
  });

  it('leaves the attention index and appends a CONFIRMED entry with the outcome', async () => {
    await store.confirm(messageId, FIXED_NOW, 'REJECTED_OUT_OF_STOCK');

    const input = sentUpdate();
    expect(clausesOf(input).remove).toContain('attentionKey');
    expect(input.ExpressionAttributeValues?.[':historyEntry']).toEqual([
      { at: FIXED_NOW.toISOString(), event: 'CONFIRMED', to: 'CONFIRMED', outcome: 'REJECTED_OUT_OF_STOCK' },
    ]);
    expectWellFormed(input);
  });

  it('returns NOT_FOUND when there is no such message (no old item)', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed());

    await expect(store.confirm(messageId, FIXED_NOW)).resolves.toBe('NOT_FOUND');
  });

  it('throws errors other than a failed condition', async () => {
    ddb.on(UpdateCommand).rejects(new Error('InternalServerError'));

    await expect(store.confirm(messageId, FIXED_NOW)).rejects.toThrow('InternalServerError');
  });
});

describe('DynamoOutboxStore.claim and release', () => {
  const claim = {
    messageId,
    status: MessageStatus.SENT,
    owner: 'sweeper-a',
    now: FIXED_NOW,
    leaseMs: 60_000,
  };

  it('claims a due message for its owner with a conditional update on the outbox table, and returns it as stored', async () => {
    const stored = outboxItem({
      messageId,
      status: MessageStatus.SENT,
      attempts: 1,
      leaseOwner: 'sweeper-a',
    });
    ddb.on(UpdateCommand).resolves({ Attributes: stored });

    await expect(store.claim(claim)).resolves.toEqual({
      outcome: 'CLAIMED',
      message: { messageId, item: expect.objectContaining({ ...stored }) },
    });

    const input = sentUpdate();
    // The due index holds no payload: the claim's answer carries the whole message, at no read cost.
    expect(input).toMatchObject({ TableName: 'outbox', Key: { messageId }, ReturnValues: 'ALL_NEW' });
    expect(input.ConditionExpression).toBe('#status IN (:status0) AND #nextAttemptAt <= :now');
    expect(input.ExpressionAttributeValues).toMatchObject({
      ':status0': 'SENT',
      ':owner': 'sweeper-a',
      ':leaseUntil': '2024-05-01T12:01:00.000Z',
      ':now': FIXED_NOW.toISOString(),
    });
    expectWellFormed(input);
  });

  it('claims a message whose status could not be read in any status with work left, and reports it unreadable', async () => {
    const { status: _status, ...unread } = claim;

    ddb.on(UpdateCommand).resolves({ Attributes: { messageId, status: 'PENDING', leaseOwner: 'sweeper-a' } });

    await expect(store.claim(unread)).resolves.toEqual({
      outcome: 'CLAIMED',
      message: { messageId, unreadable: expect.stringContaining('topic') },
    });

    const input = sentUpdate();
    expect(input.ConditionExpression).toBe('#status IN (:status0, :status1) AND #nextAttemptAt <= :now');
    expect(input.ExpressionAttributeValues).toMatchObject({ ':status0': 'PENDING', ':status1': 'SENT' });
    expectWellFormed(input);
  });

  it('fails a claimed, unreadable message with the reason, out of the due index, only for the lease owner', async () => {
    await expect(
      store.failUnreadable({
        messageId,
        owner: 'sweeper-a',
        now: FIXED_NOW,
        reason: 'unreadable outbox item: topic',
      }),
    ).resolves.toBe(true);

    const input = sentUpdate();
    expect(input.ConditionExpression).toBe('#status IN (:from0, :from1) AND #leaseOwner = :owner');
    expect(input.UpdateExpression).toMatch(/REMOVE #dueShard, #nextAttemptAt, #leaseOwner, #leaseUntil$/);
    expect(input.ExpressionAttributeValues).toMatchObject({
      ':to': 'FAILED',
      ':reason': 'unreadable outbox item: topic',
      ':owner': 'sweeper-a',
    });
    expectWellFormed(input);
  });

  it('files an unreadable message it fails in the attention index', async () => {
    const sweeper = new DynamoOutboxStore({ client, tableName: 'outbox', dueShards: 2, actor: 'sweeper' });

    await sweeper.failUnreadable({
      messageId,
      owner: 'sweeper-a',
      now: FIXED_NOW,
      reason: 'topic: Required',
    });

    const input = sentUpdate();
    expect(input.ExpressionAttributeValues).toMatchObject({
      ':attentionKey': `FAILED#${dueShardOf(messageId, 2)}`,
      ':historyEntry': [
        {
          at: FIXED_NOW.toISOString(),
          event: 'FAILED',
          to: 'FAILED',
          by: 'sweeper',
          reason: 'topic: Required',
        },
      ],
    });
  });

  it('requeues with a REQUEUED entry by its actor', async () => {
    const sweeper = new DynamoOutboxStore({ client, tableName: 'outbox', actor: 'sweeper' });

    await expect(sweeper.requeue(messageId, 'sweeper-a', FIXED_NOW)).resolves.toBe(true);

    const input = sentUpdate();
    expect(input.ExpressionAttributeValues?.[':historyEntry']).toEqual([
      expect.objectContaining({ event: 'REQUEUED', from: 'SENT', to: 'PENDING', by: 'sweeper' }),
    ]);
    expectWellFormed(input);
  });

  it('postpones a SENT message to its deadline only while it is still SENT with that deadline and due', async () => {
    const confirmBy = '2024-05-01T12:05:00.000Z';

    await expect(store.postpone({ messageId, confirmBy, now: FIXED_NOW })).resolves.toBe(true);

    const input = sentUpdate();
    expect(input.UpdateExpression).toBe('SET #nextAttemptAt = :confirmBy');
    expect(input.ConditionExpression).toBe(
      '#status = :sent AND #confirmBy = :confirmBy AND #nextAttemptAt <= :now',
    );
    expect(input.ExpressionAttributeValues).toEqual({
      ':sent': 'SENT',
      ':confirmBy': confirmBy,
      ':now': FIXED_NOW.toISOString(),
    });
    expectWellFormed(input);

    ddb.on(UpdateCommand).rejects(conditionFailed(outboxItem({ messageId, status: 'CONFIRMED' })));
    await expect(store.postpone({ messageId, confirmBy, now: FIXED_NOW })).resolves.toBe(false);
  });

  it('returns LOST when another sweeper claimed it first', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed());

    await expect(store.claim(claim)).resolves.toEqual({ outcome: 'LOST' });
  });

  it('releases a claim, due again at the given time, only for the lease owner', async () => {
    const nextAttemptAt = new Date('2024-05-01T12:02:00.000Z');

    await expect(
      store.release({ messageId, owner: 'sweeper-a', now: FIXED_NOW, nextAttemptAt }),
    ).resolves.toBe(true);

    const input = sentUpdate();
    expect(input).toMatchObject({ TableName: 'outbox', Key: { messageId } });
    expect(input.ConditionExpression).toBe('#leaseOwner = :owner');
    expect(input.ExpressionAttributeValues).toMatchObject({
      ':owner': 'sweeper-a',
      ':next': '2024-05-01T12:02:00.000Z',
    });
    expectWellFormed(input);
  });

  it('reports a release of a lease held by someone else as not applied', async () => {
    ddb.on(UpdateCommand).rejects(conditionFailed());

    await expect(
      store.release({ messageId, owner: 'sweeper-b', now: FIXED_NOW, nextAttemptAt: FIXED_NOW }),
    ).resolves.toBe(false);
  });
});

describe('confirmDeadlineAfter', () => {
  it('doubles the confirmation deadline per delivery round and caps it at 12 hours', () => {
    expect(confirmDeadlineAfter(300_000, 0)).toBe(300_000);
    expect(confirmDeadlineAfter(300_000, 1)).toBe(600_000);
    expect(confirmDeadlineAfter(300_000, 3)).toBe(2_400_000);
    expect(confirmDeadlineAfter(300_000, 40)).toBe(MAX_CONFIRM_DEADLINE_MS);
  });
});
