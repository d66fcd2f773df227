import {
  ChangeMessageVisibilityCommand,
  SendMessageCommand,
  type SendMessageCommandInput,
  SQSClient,
} from '@aws-sdk/client-sqs';
import { PutCommand } from '@aws-sdk/lib-dynamodb';
import type { SQSEvent, SQSMessageAttributes, SQSRecord } from 'aws-lambda';
import { mockClient } from 'aws-sdk-client-mock';
import fc from 'fast-check';
import { MemoryQueues } from 'serverless-outbox/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { handler } from '../../functions/inventory/apply-order/handler.ts';
import { orderCreatedSchema } from '../../functions/inventory/apply-order/order-created.ts';
import { REJECTED_OUT_OF_STOCK } from '../../functions/inventory/apply-order/plan-stock-reservation.ts';
import { isReservationKey } from '../../functions/inventory/reservation.ts';
import { receivedEnvelopeSchema } from '../../shared/message/envelope.ts';
import { envelope, lambdaContext, sqsRecord, testMessageId } from '../support/factories.ts';
import { brokenJsonText, jsonText, oddString } from './adversarial-input.ts';
import { fuzzParameters, fuzzTimeoutMs } from './fuzz-runs.ts';
import { memoryTables, TABLES } from './memory-tables.ts';
import { takePrototypePollution } from './prototype-pollution.ts';

const RUNS = fuzzParameters(60);
/**
 * The example's inventory consumer, as deployed (the library's consumer handler around the stock plan), fed SQS
 * batches that mix well-formed `order.created` messages (some delivered twice) with malformed ones: bodies that
 * are not JSON or not an envelope, wrong topics, unreadable payloads, odd message attributes and receive counts,
 * huge values. The handler never throws (that would fail the whole batch, again and again); every malformed
 * record is dead-lettered as POISON with its body unchanged and acknowledged; stock and inbox change only for
 * well-formed messages, once each.
 */

const SOURCE = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created';
const DLQ = 'https://sqs.eu-west-1.amazonaws.com/123456789012/order-created-dlq';
const env = {
  INVENTORY_TABLE: TABLES.inventory,
  INBOX_TABLE: TABLES.inbox,
  OUTBOX_TABLE: TABLES.outbox,
  SOURCE_QUEUE_URL: SOURCE,
  DEAD_LETTER_QUEUE_URL: DLQ,
  MAX_RECEIVE_COUNT: '5',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
  POWERTOOLS_METRICS_DISABLED: 'true',
};

/** Stock at the start: one SKU plentiful, one scarce (orders run it out), SKU-3 unknown. */
const INITIAL_STOCK: Readonly<Record<string, number>> = { 'SKU-1': 1_000_000, 'SKU-2': 12 };
const SKUS = ['SKU-1', 'SKU-2', 'SKU-3'];

/** The well-formed messages: a fixed pool, so that a batch redelivers some of them. */
const ORDERS = Array.from({ length: 8 }, (_, index) =>
  envelope({
    messageId: testMessageId(index + 1),
    aggregateId: `order-${index}`,
    payload: {
      orderId: `order-${index}`,
      customerId: 'c-1',
      items: [
        { sku: SKUS[index % 3] ?? 'SKU-1', quantity: 1 + (index % 4) },
        ...(index % 2 === 0 ? [{ sku: 'SKU-2', quantity: 2 }] : []),
      ],
    },
  }),
);

/** A JSON value as an adversary picks it, for replacing one field of an envelope or its payload. */
const oddValue: fc.Arbitrary<unknown> = fc.oneof(
  fc.constantFrom(null, true, 0, -1, 1.5, 1e308, '', [], {}, 'order.created', '1', [1], { sku: 'SKU-1' }),
  oddString,
  fc.constantFrom(300, 3_000).map((length) => 'S'.repeat(length)),
);

/** A well-formed order with one part broken: a field removed, retyped or replaced, or an odd field added. */
const brokenEnvelopeBody: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(...ORDERS),
    fc.constantFrom(
      'messageId',
      'topic',
      'aggregateId',
      'payload',
      'headers',
      'createdAt',
      'schemaVersion',
      'payload.orderId',
      'payload.items',
      'payload.items.0',
      'payload.items.0.sku',
      'payload.items.0.quantity',
      '__proto__',
    ),
    fc.option(oddValue, { freq: 4 }),
    fc.integer({ min: 0, max: 200_000 }),
  )
  .map(([order, field, value, unique]) => {
    const copy = JSON.parse(JSON.stringify(order)) as Record<string, unknown>;
    // A fresh id (still a ULID) so that the broken copy is not a redelivery of the good one.
    copy.messageId = testMessageId(1_000 + unique);
    const path = field.split('.');
    let holder: Record<string, unknown> = copy;
    for (const key of path.slice(0, -1)) holder = holder[key] as Record<string, unknown>;
    const last = path.at(-1) ?? '';
    if (value === null) delete holder[last];
    else Object.defineProperty(holder, last, { value, enumerable: true, writable: true, configurable: true });
    return JSON.stringify(copy);
  });

/** Another topic, or a payload of 250 KB, on an otherwise good envelope. */
const oddEnvelopeBody: fc.Arbitrary<string> = fc
  .tuple(
    fc.constantFrom(
      'order.paid',
      'inventory.updated',
      'ORDER.CREATED',
      '',
      '__proto__',
      'constructor',
      'toString',
      // The outbox's own topics, with an order for a payload: the consumer reads them itself, and finds no request.
      'outbox.erase',
      'outbox.skip',
    ),
    fc.integer({ min: 0, max: 200_000 }),
  )
  .map(([topic, unique]) => JSON.stringify(envelope({ messageId: testMessageId(300_000 + unique), topic })))
  .chain((body) =>
    fc.oneof(
      fc.constant(body),
      fc.constantFrom('order.created', 'order.paid').map((topic) =>
        JSON.stringify(
          envelope({
            messageId: testMessageId(600_000 + body.length),
            topic,
            payload: { orderId: 'big', items: [{ sku: 'SKU-1', quantity: 1 }], note: 'n'.repeat(250_000) },
          }),
        ),
      ),
    ),
  );

const malformedBody: fc.Arbitrary<string> = fc.oneof(
  { arbitrary: brokenEnvelopeBody, weight: 4 },
  { arbitrary: oddEnvelopeBody, weight: 1 },
  { arbitrary: jsonText, weight: 1 },
  // SQS never delivers an empty body, nor characters outside its set; anything else it may.
  {
    arbitrary: brokenJsonText.map((text) => text.replace(/[^\t\n\r\x20-\ud7ff\ue000-\ufffd]/g, '') || '{'),
    weight: 1,
  },
);

/** Message attributes: the relay's, missing, mistyped, extra (up to 12), or huge. */
const attributes: fc.Arbitrary<SQSMessageAttributes | undefined> = fc.option(
  fc
    .array(
      fc.tuple(
        fc.oneof(
          fc.constantFrom('message_id', 'topic', 'traceparent', '__proto__'),
          fc.stringMatching(/^[A-Za-z0-9_.-]{1,20}$/),
        ),
        fc.constantFrom('String', 'Number', 'Binary', 'String.custom'),
        fc.oneof(
          fc.constantFrom('', 'abc', '42', 'order.created', '__proto__', 'x'.repeat(2_000)),
          fc.stringMatching(/^[\x20-\x7e]{0,30}$/),
        ),
      ),
      { maxLength: 12 },
    )
    .map((entries) => {
      const result: SQSMessageAttributes = {};
      for (const [name, dataType, value] of entries) {
        Object.defineProperty(result, name, {
          value:
            dataType === 'Binary'
              ? { dataType, binaryValue: Buffer.from(value).toString('base64') }
              : { dataType, stringValue: value },
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return result;
    }),
  { freq: 2 },
);

/** One record of a batch: a good order (maybe again) or a malformed body, with odd attributes and receive counts. */
const record: fc.Arbitrary<SQSRecord> = fc
  .record({
    body: fc.oneof(
      { arbitrary: fc.constantFrom(...ORDERS).map((order) => JSON.stringify(order)), weight: 3 },
      { arbitrary: malformedBody, weight: 3 },
    ),
    attributes,
    // SQS sets the receive count itself: always a positive integer, here below, at and past the maximum.
    receiveCount: fc.constantFrom('1', '2', '4', '5', '6', '1000'),
  })
  .map(({ body, attributes: odd, receiveCount }) => {
    const base = sqsRecord(envelope(), { rawBody: body });
    return {
      ...base,
      attributes: { ...base.attributes, ApproximateReceiveCount: receiveCount },
      messageAttributes: odd ?? base.messageAttributes,
    };
  });

/** A batch: SQS message ids are unique within it. */
const batches = fc
  .array(record, { minLength: 1, maxLength: 6 })
  .map((records) =>
    records.map((one, index) => ({ ...one, messageId: `sqs-${index}`, receiptHandle: `receipt-${index}` })),
  );

/** What the consumer may do with a body: apply it (its id, its lines), or nothing but dead-letter it. */
function oracle(
  body: string,
):
  | { kind: 'apply'; messageId: string; orderId: string; items: { sku: string; quantity: number }[] }
  | { kind: 'poison' } {
  let value: unknown;
  try {
    value = JSON.parse(body);
  } catch {
    return { kind: 'poison' };
  }
  const parsed = receivedEnvelopeSchema.safeParse(value);
  if (!parsed.success || parsed.data.topic !== 'order.created') return { kind: 'poison' };
  const order = orderCreatedSchema.safeParse(parsed.data.payload);
  if (!order.success) return { kind: 'poison' };
  // DynamoDB refuses a partition key over 2048 bytes, and a number JavaScript cannot hold exactly would be
  // stored changed: such an order can never be applied as written, however often it is retried.
  const totals = new Map<string, number>();
  for (const { sku, quantity } of order.data.items) totals.set(sku, (totals.get(sku) ?? 0) + quantity);
  const storable = [...totals].every(
    ([sku, quantity]) => Buffer.byteLength(sku) <= 2048 && Number.isSafeInteger(quantity),
  );
  if (!storable) return { kind: 'poison' };
  return {
    kind: 'apply',
    messageId: parsed.data.messageId,
    orderId: order.data.orderId,
    items: order.data.items,
  };
}

let tables: ReturnType<typeof memoryTables>;
let queues: MemoryQueues;
const sqs = mockClient(SQSClient);
/** Every SendMessage the consumer made, in order. */
const sent: SendMessageCommandInput[] = [];
let consume: (event: SQSEvent) => Promise<unknown>;

/** The stock and inbox the oracle expects, beside the real tables. */
const model = {
  stock: new Map<string, number>(),
  inbox: new Map<string, string>(),
  reserved: new Set<string>(),
};

/** Every run starts from the same stock and an empty inbox, so a failure shrinks to the batch that caused it. */
async function startOver(): Promise<void> {
  tables.reset();
  queues.purge(DLQ);
  model.stock = new Map(Object.entries(INITIAL_STOCK));
  model.inbox = new Map();
  model.reserved = new Set();
  for (const [sku, available] of Object.entries(INITIAL_STOCK)) {
    await tables.memory.send(new PutCommand({ TableName: TABLES.inventory, Item: { sku, available } }));
  }
}

beforeAll(() => {
  tables = memoryTables();
  queues = new MemoryQueues(
    { [SOURCE]: { visibilityTimeoutMs: 30_000 }, [DLQ]: { visibilityTimeoutMs: 30_000 } },
    () => new Date(),
  );
  // Sends go to in-memory queues that check them as SQS does (size, attributes, characters).
  sqs.on(SendMessageCommand).callsFake((input: SendMessageCommandInput) => {
    sent.push(input);
    const message = queues.send(input.QueueUrl ?? '', {
      body: input.MessageBody ?? '',
      attributes: Object.fromEntries(
        Object.entries(input.MessageAttributes ?? {}).map(([name, value]) => [
          name,
          {
            dataType: value.DataType ?? '',
            ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
          },
        ]),
      ),
      ...(input.DelaySeconds === undefined ? {} : { delayMs: input.DelaySeconds * 1000 }),
    });
    return { MessageId: message.messageId };
  });
  sqs.on(ChangeMessageVisibilityCommand).resolves({});
  const built = handler.withEnv(env);
  consume = (event) => built(event, lambdaContext());
});

afterAll(() => {
  tables.restore();
  sqs.restore();
});

/** Applies a well-formed message to the model, as the consumer's documented rule says. */
function applyToModel(order: {
  messageId: string;
  orderId: string;
  items: readonly { sku: string; quantity: number }[];
}): void {
  const { messageId, orderId, items } = order;
  if (model.inbox.has(messageId)) return;
  const wanted = new Map<string, number>();
  for (const { sku, quantity } of items) wanted.set(sku, (wanted.get(sku) ?? 0) + quantity);
  const enough = [...wanted].every(([sku, quantity]) => (model.stock.get(sku) ?? -Infinity) >= quantity);
  // An order reserves once: another message for an order already reserved (its reservation row exists) is refused.
  if (!enough || model.reserved.has(orderId)) {
    model.inbox.set(messageId, REJECTED_OUT_OF_STOCK);
    return;
  }
  for (const [sku, quantity] of wanted) model.stock.set(sku, (model.stock.get(sku) ?? 0) - quantity);
  model.reserved.add(orderId);
  model.inbox.set(messageId, 'APPLIED');
}

describe('the inventory consumer, fuzzed with SQS batches', () => {
  it(
    'never fails a batch, dead-letters each malformed record as POISON, and applies each good order once',
    async () => {
      const outcomes = new Map<string, number>();
      const recorded = new Set<string>();
      await fc.assert(
        fc.asyncProperty(batches, async (batch) => {
          await startOver();
          const sentBefore = sent.length;
          const outboxBefore = tables.snapshot().outbox;

          const response = await consume({ Records: batch });

          // A topic named `__proto__` must stay a name: written into a plain object it changes every object.
          expect(takePrototypePollution(), 'keys added to Object.prototype').toEqual([]);
          expect(response).toEqual({ batchItemFailures: [] });
          const expectedLetters: { body: string; reason: string }[] = [];
          for (const one of batch) {
            const verdict = oracle(one.body);
            outcomes.set(verdict.kind, (outcomes.get(verdict.kind) ?? 0) + 1);
            if (verdict.kind === 'apply') applyToModel(verdict);
            else expectedLetters.push({ body: one.body, reason: 'POISON' });
          }
          const letters = sent.slice(sentBefore);
          // Records that touch no common item are handled concurrently, so their dead letters may leave in any
          // order: each malformed record once, as POISON.
          const byBody = (a: { body?: string }, b: { body?: string }) =>
            String(a.body).localeCompare(String(b.body));
          expect(
            letters
              .map((letter) => ({
                queue: letter.QueueUrl,
                body: letter.MessageBody,
                reason: letter.MessageAttributes?.dead_letter_reason?.StringValue,
              }))
              .sort(byBody),
          ).toEqual(expectedLetters.map(({ body, reason }) => ({ queue: DLQ, body, reason })).sort(byBody));

          const after = tables.snapshot();
          // Stock rows only: each applied order also leaves its reservation row (`reservation#<orderId>`).
          const stockRows = after.inventory.filter((row) => !isReservationKey(String(row.sku)));
          expect(Object.fromEntries(stockRows.map((row) => [row.sku, row.available]))).toEqual(
            Object.fromEntries(model.stock),
          );
          expect(Object.fromEntries(after.inbox.map((row) => [row.messageId, row.outcome]))).toEqual(
            Object.fromEntries(model.inbox),
          );
          expect(after.outbox).toEqual(outboxBefore);
          for (const outcome of model.inbox.values()) recorded.add(outcome);
        }),
        RUNS,
      );
      expect(outcomes.get('apply')).toBeGreaterThan(0);
      expect(outcomes.get('poison')).toBeGreaterThan(0);
      expect([...recorded]).toEqual(expect.arrayContaining(['APPLIED', REJECTED_OUT_OF_STOCK]));
    },
    fuzzTimeoutMs(RUNS, 100),
  );
});
