import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, TransactWriteCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { beforeEach, describe, expect, it } from 'vitest';
import {
  type OutboxWriterOptions,
  outboxTransaction,
  writeWithOutbox,
} from '../../../shared/aws/outbox-writer.ts';
import { CLAIM_CHECK_HEADER } from '../../../shared/claim-check/claim-check-reference.ts';
import {
  InvalidMessageError,
  MessageTooLargeError,
  TransactionLimit,
  TransactionLimitError,
} from '../../../shared/errors.ts';
import { MemoryObjectStore } from '../../../shared/memory/memory-object-store.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { messageSizeBytes, SQS_MAX_MESSAGE_BYTES } from '../../../shared/message/message-size.ts';
import type { OutboxWrite } from '../../../shared/outbox/outbox-write.ts';
import { OutboxSettings } from '../../../shared/settings/outbox-settings.ts';
import { itemSizeBytes } from '../../../shared/transaction/item-size.ts';
import {
  actionSizeBytes,
  TRANSACTION_LIMITS,
  type TransactWriteAction,
} from '../../../shared/transaction/transaction-limits.ts';
import { envelope, FIXED_NOW, testMessageId } from '../../support/factories.ts';

const ddb = mockClient(DynamoDBDocumentClient);
const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
const options = { client, outboxTable: 'outbox', clock: () => FIXED_NOW };

/** The transaction the writer must send for `write`: the public builder's list, for the same time. */
const expectedItems = (write: OutboxWrite) =>
  outboxTransaction(write, { outboxTable: 'outbox', now: FIXED_NOW });

const transactions = () => ddb.commandCalls(TransactWriteCommand).map((call) => call.args[0].input);

/** A business Put whose item is exactly `bytes` by DynamoDB's measure. */
function putOfSize(bytes: number, id = 'order-1'): TransactWriteAction {
  const padding = bytes - itemSizeBytes({ orderId: id, blob: '' });
  return { Put: { TableName: 'orders', Item: { orderId: id, blob: 'x'.repeat(padding) } } };
}

/** A message whose wire size is exactly `bytes` (a padded payload). */
function messageOfWireSize(bytes: number): Envelope {
  const base = envelope({ payload: { notes: '' } });
  return envelope({ payload: { notes: 'n'.repeat(bytes - messageSizeBytes(base)) } });
}

/** What the writer threw, or a failure when it did not throw. */
async function refusal(write: OutboxWrite, overrides: Partial<OutboxWriterOptions> = {}): Promise<unknown> {
  return writeWithOutbox({ ...options, ...overrides }, write).then(
    () => expect.fail('the write was accepted'),
    (error: unknown) => error,
  );
}

beforeEach(() => {
  ddb.reset();
  ddb.on(TransactWriteCommand).resolves({});
});

describe('writeWithOutbox checks each limit at its boundary, then sends the transaction it checked, once', () => {
  it('sends one transaction of exactly the 100 actions DynamoDB accepts, and refuses 101', async () => {
    const actions = Array.from({ length: 99 }, (_, i) => putOfSize(100, `o-${i}`));
    const write = { actions, messages: [envelope()] };

    await writeWithOutbox(options, write);
    const error = await refusal({ actions: [...actions, putOfSize(100, 'o-99')], messages: [envelope()] });

    expect(transactions()).toEqual([
      { TransactItems: expectedItems(write), ClientRequestToken: testMessageId(1) },
    ]);
    expect(transactions()[0]?.TransactItems).toHaveLength(TRANSACTION_LIMITS.maxActions);
    expect(error).toBeInstanceOf(TransactionLimitError);
    expect(error).toMatchObject({ limit: TransactionLimit.ACTIONS, actual: 101, maximum: 100 });
  });

  it('sends an item of exactly 400 KB, and refuses one byte more naming its action', async () => {
    const write = { actions: [putOfSize(TRANSACTION_LIMITS.maxItemBytes)], messages: [envelope()] };

    await writeWithOutbox(options, write);
    const error = await refusal({
      actions: [putOfSize(TRANSACTION_LIMITS.maxItemBytes + 1)],
      messages: [envelope()],
    });

    expect(transactions().map((input) => input.TransactItems)).toEqual([expectedItems(write)]);
    expect(error).toBeInstanceOf(TransactionLimitError);
    expect(error).toMatchObject({
      limit: TransactionLimit.ITEM_SIZE,
      actual: TRANSACTION_LIMITS.maxItemBytes + 1,
    });
    expect((error as Error).message).toContain('action 0 (Put orders)');
  });

  it('sends a transaction of exactly 4 MB, outbox Put included, and refuses one byte more', async () => {
    const message = envelope();
    const [outboxPut] = expectedItems({ actions: [], messages: [message] });
    const full = Array.from({ length: 10 }, (_, i) => putOfSize(TRANSACTION_LIMITS.maxItemBytes, `o-${i}`));
    const rest =
      TRANSACTION_LIMITS.maxTransactionBytes -
      10 * TRANSACTION_LIMITS.maxItemBytes -
      actionSizeBytes(outboxPut ?? {});
    const write = { actions: [...full, putOfSize(rest, 'o-10')], messages: [message] };

    await writeWithOutbox(options, write);
    const error = await refusal({ actions: [...full, putOfSize(rest + 1, 'o-10')], messages: [message] });

    expect(transactions().map((input) => input.TransactItems)).toEqual([expectedItems(write)]);
    expect(error).toBeInstanceOf(TransactionLimitError);
    expect(error).toMatchObject({
      limit: TransactionLimit.TRANSACTION_SIZE,
      actual: TRANSACTION_LIMITS.maxTransactionBytes + 1,
    });
  });

  it('sends a message of exactly the queue limit on the wire, and refuses one byte more', async () => {
    const atLimit = messageOfWireSize(SQS_MAX_MESSAGE_BYTES);
    const write = { actions: [], messages: [atLimit] };

    await writeWithOutbox(options, write);
    const error = await refusal({ actions: [], messages: [messageOfWireSize(SQS_MAX_MESSAGE_BYTES + 1)] });

    expect(transactions().map((input) => input.TransactItems)).toEqual([expectedItems(write)]);
    expect(error).toBeInstanceOf(MessageTooLargeError);
    expect(error).toMatchObject({
      actualBytes: SQS_MAX_MESSAGE_BYTES + 1,
      maximumBytes: SQS_MAX_MESSAGE_BYTES,
    });
  });

  it.each([
    ['without a claim check', {}],
    ['with a claim check', { claimCheck: { store: new MemoryObjectStore(), bucket: 'claims' } }],
  ])(
    'refuses a message that sets the claim-check marker itself, %s, and sends nothing',
    async (_kind, extra) => {
      const forged = envelope({ headers: { [CLAIM_CHECK_HEADER]: '1' } });

      const error = await refusal({ actions: [], messages: [forged] }, extra);

      expect(error).toBeInstanceOf(InvalidMessageError);
      expect(error).toMatchObject({ path: `headers["${CLAIM_CHECK_HEADER}"]` });
      expect(ddb.calls()).toHaveLength(0);
    },
  );
});

describe('writeWithOutbox refuses an option with the message its setting gives for the same value', () => {
  it.each([
    ['dueShards', OutboxSettings.dueShards, [0, 65, 1.5, Number.NaN]],
    ['streamGraceMs', OutboxSettings.streamGraceMs, [-1, 43_200_001]],
  ] as const)('%s', async (option, setting, values) => {
    for (const value of values) {
      const expected = messageOf(() => setting.validate(value));

      const error = await refusal({ actions: [], messages: [envelope()] }, { [option]: value });

      expect(error).toMatchObject({ code: 'INVALID_CONFIG', message: expected });
    }
    expect(ddb.calls()).toHaveLength(0);
  });

  it.each([1_023, 240 * 1024 + 1])('claimCheck.thresholdBytes of %s', async (thresholdBytes) => {
    const expected = messageOf(() => OutboxSettings.claimCheckThresholdBytes.validate(thresholdBytes));
    const claimCheck = { store: new MemoryObjectStore(), bucket: 'claims', thresholdBytes };

    const error = await refusal({ actions: [], messages: [envelope()] }, { claimCheck });

    expect(error).toMatchObject({ code: 'INVALID_CONFIG', message: expected });
    expect(ddb.calls()).toHaveLength(0);
  });
});

function messageOf(refuse: () => unknown): string {
  try {
    refuse();
  } catch (error) {
    return (error as Error).message;
  }
  throw new Error('the setting accepted the value');
}
