import { ConditionalCheckFailedException, DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { PoisonMessageError, TransactionConflictError } from '../../../shared/errors.ts';
import { type ConsumeDeps, consumeMessage } from '../../../shared/lambda/inbox-consumer.ts';
import type { TransactWriteAction } from '../../../shared/transaction/transaction-limits.ts';
import { envelope, FIXED_NOW, testMessageId, transactionCanceled } from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
/** The waits of the in-invocation conflict retry (none is really waited). */
const waits: number[] = [];
const deps: ConsumeDeps = {
  client,
  inboxTable: 'inbox',
  confirmer: new DynamoOutboxStore({ client, tableName: 'outbox' }),
  clock: () => FIXED_NOW,
  sleep: async (ms) => {
    waits.push(ms);
  },
  random: () => 0.5,
};
const message = envelope({ messageId: testMessageId(11) });

const stockUpdate = (sku: string, quantity: number): TransactWriteAction => ({
  Update: {
    TableName: 'inventory',
    Key: { sku },
    UpdateExpression: 'SET #available = #available - :quantity',
    ConditionExpression: '#available >= :quantity',
    ExpressionAttributeNames: { '#available': 'available' },
    ExpressionAttributeValues: { ':quantity': quantity },
  },
});
const reserve: PlanEffect = () => ({
  apply: [stockUpdate('SKU-1', 2), stockUpdate('SKU-2', 1)],
  onConditionFailure: 'REJECTED_OUT_OF_STOCK',
});

const expectedInboxPut = (outcome: string): TransactWriteAction => ({
  Put: {
    TableName: 'inbox',
    Item: {
      messageId: message.messageId,
      topic: 'order.created',
      outcome,
      processedAt: FIXED_NOW.toISOString(),
      expiresAt: FIXED_NOW.getTime() / 1000 + 30 * 86_400,
    },
    ConditionExpression: 'attribute_not_exists(#messageId)',
    ExpressionAttributeNames: { '#messageId': 'messageId' },
    ReturnValuesOnConditionCheckFailure: 'ALL_OLD',
  },
});

function transactions(): TransactWriteAction[][] {
  return ddb.commandCalls(TransactWriteCommand).map((call) => call.args[0].input.TransactItems ?? []);
}

function confirmedIds(): unknown[] {
  return ddb
    .commandCalls(UpdateCommand)
    .filter((call) => call.args[0].input.ExpressionAttributeValues?.[':to'] === 'CONFIRMED')
    .map((call) => call.args[0].input.Key?.messageId);
}

beforeEach(() => {
  waits.length = 0;
  ddb.reset();
  ddb.on(TransactWriteCommand).resolves({});
  ddb.on(UpdateCommand).resolves({});
});

describe('consumeMessage', () => {
  it('applies the effect with the inbox put first, in ONE transaction, then confirms the message', async () => {
    const result = await consumeMessage(message, reserve, deps);

    expect(result).toEqual({ kind: 'APPLIED', outcome: 'APPLIED', confirmation: 'CONFIRMED' });
    expect(transactions()).toEqual([
      [expectedInboxPut('APPLIED'), stockUpdate('SKU-1', 2), stockUpdate('SKU-2', 1)],
    ]);
    expect(confirmedIds()).toEqual([message.messageId]);
    // The confirmation comes after the commit, never before.
    expect(ddb.calls().map((call) => call.args[0].constructor.name)).toEqual([
      'TransactWriteCommand',
      'UpdateCommand',
    ]);
  });

  it('records the outcome the plan names for its committed effect (a release, say) instead of APPLIED', async () => {
    const release: PlanEffect = (received) => ({ ...reserve(received), outcome: 'RELEASED' });

    const result = await consumeMessage(message, release, deps);

    expect(result).toEqual({ kind: 'APPLIED', outcome: 'RELEASED', confirmation: 'CONFIRMED' });
    expect(transactions()).toEqual([
      [expectedInboxPut('RELEASED'), stockUpdate('SKU-1', 2), stockUpdate('SKU-2', 1)],
    ]);
  });

  it('skips a duplicate: the inbox condition fails, no second effect, the earlier outcome is reported', async () => {
    ddb.on(TransactWriteCommand).rejects(
      transactionCanceled([
        {
          Code: 'ConditionalCheckFailed',
          Item: { messageId: { S: message.messageId }, outcome: { S: 'APPLIED' } },
        },
        { Code: 'None' },
        { Code: 'None' },
      ]),
    );

    const result = await consumeMessage(message, reserve, deps);

    expect(result).toEqual({ kind: 'DUPLICATE', outcome: 'APPLIED', confirmation: 'CONFIRMED' });
    expect(transactions()).toHaveLength(1);
  });

  it('still confirms a duplicate, in case the first delivery crashed before its confirmation', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'ConditionalCheckFailed' }, { Code: 'None' }]));

    const result = await consumeMessage(message, reserve, deps);

    expect(result.kind).toBe('DUPLICATE');
    expect(result.outcome).toBe('UNKNOWN');
    expect(confirmedIds()).toEqual([message.messageId]);
  });

  it('records the business outcome when a business condition fails, with only the inbox put, then confirms', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(
        transactionCanceled([{ Code: 'None' }, { Code: 'None' }, { Code: 'ConditionalCheckFailed' }]),
      )
      .resolves({});

    const result = await consumeMessage(message, reserve, deps);

    expect(result).toEqual({ kind: 'REJECTED', outcome: 'REJECTED_OUT_OF_STOCK', confirmation: 'CONFIRMED' });
    expect(transactions()).toEqual([
      [expectedInboxPut('APPLIED'), stockUpdate('SKU-1', 2), stockUpdate('SKU-2', 1)],
      [expectedInboxPut('REJECTED_OUT_OF_STOCK')],
    ]);
    expect(confirmedIds()).toEqual([message.messageId]);
  });

  it('reports a duplicate when another delivery recorded the message between the two transactions', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejectsOnce(
        transactionCanceled([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }, { Code: 'None' }]),
      )
      .rejectsOnce(
        transactionCanceled([{ Code: 'ConditionalCheckFailed', Item: { outcome: { S: 'APPLIED' } } }]),
      );

    const result = await consumeMessage(message, reserve, deps);

    expect(result).toMatchObject({ kind: 'DUPLICATE', outcome: 'APPLIED' });
    expect(transactions()).toHaveLength(2);
  });

  it('records a rejection planned by the consumer with only the inbox put', async () => {
    const result = await consumeMessage(message, () => ({ reject: 'REJECTED_BLOCKED_CUSTOMER' }), deps);

    expect(result).toEqual({
      kind: 'REJECTED',
      outcome: 'REJECTED_BLOCKED_CUSTOMER',
      confirmation: 'CONFIRMED',
    });
    expect(transactions()).toEqual([[expectedInboxPut('REJECTED_BLOCKED_CUSTOMER')]]);
  });

  it('retries a transaction that conflicts with a concurrent one (a hot SKU) within the invocation, with jitter', async () => {
    const conflict = transactionCanceled([
      { Code: 'None' },
      { Code: 'TransactionConflict' },
      { Code: 'None' },
    ]);
    ddb.on(TransactWriteCommand).rejectsOnce(conflict).rejectsOnce(conflict).resolves({});

    const result = await consumeMessage(message, reserve, deps);

    expect(result).toEqual({ kind: 'APPLIED', outcome: 'APPLIED', confirmation: 'CONFIRMED' });
    expect(transactions()).toHaveLength(3);
    expect(waits).toEqual([10, 20]);
    expect(confirmedIds()).toEqual([message.messageId]);
  });

  it('throws the conflict after the last in-invocation try, so the record is retried later, and confirms nothing', async () => {
    ddb
      .on(TransactWriteCommand)
      .rejects(transactionCanceled([{ Code: 'TransactionConflict' }, { Code: 'None' }]));

    await expect(
      consumeMessage(message, reserve, {
        ...deps,
        conflictRetry: { attempts: 3, baseDelayMs: 10, maxDelayMs: 10 },
      }),
    ).rejects.toBeInstanceOf(TransactionConflictError);
    expect(transactions()).toHaveLength(3);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('lets a poison message the plan cannot read escape: nothing is recorded in the inbox, nothing confirmed', async () => {
    const unreadable: PlanEffect = () => {
      throw new PoisonMessageError('order.created payload has no items');
    };

    await expect(consumeMessage(message, unreadable, deps)).rejects.toBeInstanceOf(PoisonMessageError);
    expect(transactions()).toEqual([]);
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it.each(
    [
      ['an applied effect', reserve, undefined, 'APPLIED'],
      [
        'a business rejection',
        () => ({ reject: 'REJECTED_BLOCKED_CUSTOMER' }),
        undefined,
        'REJECTED_BLOCKED_CUSTOMER',
      ],
      [
        'a failed business condition',
        reserve,
        transactionCanceled([{ Code: 'None' }, { Code: 'ConditionalCheckFailed' }, { Code: 'None' }]),
        'REJECTED_OUT_OF_STOCK',
      ],
    ].map(([kind, plan, firstFailure, outcome]) => ({
      kind,
      plan: plan as PlanEffect,
      firstFailure: firstFailure as Error | undefined,
      outcome,
    })),
  )(
    'carries the outcome of $kind back to the producer with the confirmation',
    async ({ plan, firstFailure, outcome }) => {
      if (firstFailure !== undefined) ddb.on(TransactWriteCommand).rejectsOnce(firstFailure).resolves({});

      await consumeMessage(message, plan, deps);

      const confirm = ddb.commandCalls(UpdateCommand)[0]?.args[0].input;
      expect(confirm?.ExpressionAttributeValues?.[':outcome']).toBe(outcome);
      expect(confirm?.UpdateExpression).toContain('#outcome = :outcome');
    },
  );

  it('throws any other error, and confirms nothing', async () => {
    ddb.on(TransactWriteCommand).rejects(new Error('InternalServerError'));

    await expect(consumeMessage(message, reserve, deps)).rejects.toThrow('InternalServerError');
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('reports the confirmation outcome of a message confirmed before', async () => {
    ddb.on(UpdateCommand).rejects(
      new ConditionalCheckFailedException({
        message: 'failed',
        $metadata: {},
        Item: { messageId: { S: message.messageId }, status: { S: 'CONFIRMED' } },
      }),
    );

    await expect(consumeMessage(message, reserve, deps)).resolves.toMatchObject({
      kind: 'APPLIED',
      confirmation: 'ALREADY_CONFIRMED',
    });
  });

  it('confirms nothing when the producer is elsewhere (no confirmer)', async () => {
    const { confirmer: _, ...withoutConfirmer } = deps;

    const result = await consumeMessage(message, reserve, withoutConfirmer);

    expect(result.confirmation).toBeUndefined();
    expect(ddb.commandCalls(UpdateCommand)).toHaveLength(0);
  });

  it('keeps inbox rows for the configured retention', async () => {
    await consumeMessage(message, reserve, { ...deps, inboxRetentionDays: 2 });

    expect(transactions()[0]?.[0]?.Put?.Item?.expiresAt).toBe(FIXED_NOW.getTime() / 1000 + 2 * 86_400);
  });
});
