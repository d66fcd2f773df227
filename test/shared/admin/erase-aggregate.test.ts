import { DeleteCommand, GetCommand, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { AggregateInFlightError, ReasonRequiredError } from '../../../shared/admin/admin-errors.ts';
import { eraseAggregate } from '../../../shared/admin/erase-aggregate.ts';
import { replayMessage } from '../../../shared/admin/message-actions.ts';
import { dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import { CLAIM_CHECK_HEADER } from '../../../shared/claim-check/claim-check-reference.ts';
import { MemoryObjectStore } from '../../../shared/memory/memory-object-store.ts';
import { MAX_ERASE_ENTRIES } from '../../../shared/message/control-message.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import type { OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import { testMessageId } from '../../support/factories.ts';
import {
  type AdminFixture,
  adminFixture,
  auditRows,
  interceptedClient,
  pipeline,
  storedMessage,
  storeMessage,
} from './admin-fixture.ts';

const { PENDING, SENT, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
const id = testMessageId;
const input = { aggregateId: 'order-7', reason: 'GDPR request #881', actor: 'local:ana' };

let fixture: AdminFixture;

beforeEach(() => {
  fixture = adminFixture();
});

async function inboxRow(table: string, messageId: string) {
  return (await fixture.db.send(new GetCommand({ TableName: table, Key: { messageId } }))).Item;
}

async function putInboxRow(table: string, messageId: string) {
  await fixture.db.send(
    new PutCommand({ TableName: table, Item: { messageId, topic: 't', outcome: 'APPLIED' } }),
  );
}

describe('eraseAggregate', () => {
  it.each([PENDING, SENT])(
    'refuses with a 409 while a message of the aggregate is %s, and deletes nothing',
    async (status) => {
      await storeMessage(fixture, { messageId: id(1), aggregateId: 'order-7', status: CONFIRMED });
      await storeMessage(fixture, { messageId: id(2), aggregateId: 'order-7', status });
      await putInboxRow('inbox', id(1));

      const error = await eraseAggregate(fixture.deps, input).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(AggregateInFlightError);
      expect(error).toMatchObject({ httpStatus: 409, inFlight: [{ messageId: id(2), status }] });
      expect(fixture.db.itemCount('outbox')).toBe(2);
      expect(await inboxRow('inbox', id(1))).toBeDefined();
      expect(fixture.db.itemCount('audit')).toBe(0);
    },
  );

  it("deletes every finished message of the aggregate and nobody else's, and keeps every consumer's dedupe rows", async () => {
    await storeMessage(fixture, { messageId: id(1), aggregateId: 'order-7', status: CONFIRMED });
    await storeMessage(fixture, { messageId: id(2), aggregateId: 'order-7', status: FAILED });
    await storeMessage(fixture, {
      messageId: id(3),
      aggregateId: 'order-7',
      status: CANCELLED,
      topic: 'payment.captured',
    });
    await storeMessage(fixture, { messageId: id(4), aggregateId: 'order-8', status: CONFIRMED });
    await putInboxRow('inbox', id(1));
    await putInboxRow('paymentsInbox', id(3));
    await putInboxRow('inbox', id(4));

    const result = await eraseAggregate(fixture.deps, input);

    expect(result).toEqual({
      aggregateId: 'order-7',
      messagesDeleted: 3,
      parkedRowsDeleted: 0,
      claimCheckObjectsDeleted: 0,
      claimCheckObjectsNotDeleted: [],
      skippedInFlight: [],
      // No subscriber had a delivery of them: none is sent an erase.
      erasesSent: [],
      actionId: expect.any(String),
    });
    for (const n of [1, 2, 3]) expect(await storedMessage(fixture, id(n))).toBeUndefined();
    expect(await storedMessage(fixture, id(4))).toBeDefined();
    // No payload in them, and a copy still in a queue must find them: they expire with the inbox retention.
    expect(await inboxRow('inbox', id(1))).toBeDefined();
    expect(await inboxRow('paymentsInbox', id(3))).toBeDefined();
  });

  it('deletes the parked row that holds an erased message (its payload), and no other parked row or cursor', async () => {
    const orderKey = 'order#order-7';
    await storeMessage(fixture, {
      messageId: id(2),
      aggregateId: 'order-7',
      status: FAILED,
      orderKey,
      seq: 2,
    });
    const parkedRow = (seq: number, messageId: string) => ({
      messageId: `parked#${orderKey}#${seq}`,
      orderKey,
      seq,
      parkedMessageId: messageId,
      body: '{"payload":"personal"}',
    });
    await fixture.db.send(new PutCommand({ TableName: 'inbox', Item: parkedRow(2, id(2)) }));
    // A row at seq 3 holds another message, which this erase does not touch.
    await fixture.db.send(new PutCommand({ TableName: 'inbox', Item: parkedRow(3, id(9)) }));
    await fixture.db.send(
      new PutCommand({ TableName: 'inbox', Item: { messageId: `cursor#${orderKey}`, lastSeq: 1 } }),
    );

    const result = await eraseAggregate(fixture.deps, input);

    expect(result).toMatchObject({ messagesDeleted: 1, parkedRowsDeleted: 1 });
    expect(await inboxRow('inbox', `parked#${orderKey}#2`)).toBeUndefined();
    expect(await inboxRow('inbox', `parked#${orderKey}#3`)).toBeDefined();
    expect(await inboxRow('inbox', `cursor#${orderKey}`)).toMatchObject({ lastSeq: 1 });
  });

  it('never lets a copy still in a queue be applied twice: the erased message’s inbox row still dedupes it', async () => {
    await fixture.db.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 10 } }));
    const flow = pipeline(fixture);
    await storeMessage(fixture, { messageId: id(1), aggregateId: 'order-7', status: CONFIRMED });
    const copy = (await storedMessage(fixture, id(1))) as unknown as Envelope;
    expect((await flow.consume(copy)).kind).toBe('APPLIED');

    await eraseAggregate(fixture.deps, input);
    // A second copy (at-least-once delivery) arrives after the erase.
    const late = await flow.consume(copy);

    expect(late.kind).toBe('DUPLICATE');
    const { Item } = await fixture.db.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
    expect((Item as { available?: number } | undefined)?.available).toBe(8);
  });

  it('erasing while an operator replays an applied, cancelled message applies its effect once only', async () => {
    await fixture.db.send(new PutCommand({ TableName: 'inventory', Item: { sku: 'SKU-1', available: 10 } }));
    const flow = pipeline(fixture);
    // A copy of order-7's message was applied after the message was cancelled (APPLIED_AFTER_CANCEL).
    await storeMessage(fixture, { messageId: id(1), aggregateId: 'order-7', status: CANCELLED });
    const copy = (await storedMessage(fixture, id(1))) as unknown as Envelope;
    expect(await flow.consume(copy)).toMatchObject({ kind: 'APPLIED', confirmation: 'APPLIED_AFTER_CANCEL' });
    let replayed = false;
    const racing = interceptedClient(fixture, async (command) => {
      // The erase read the aggregate (nothing in flight); an operator replays the message before its delete.
      if (!replayed && command instanceof DeleteCommand) {
        replayed = true;
        await replayMessage(fixture.deps, { messageId: id(1), reason: 'retry it', actor: 'local:bo' });
      }
    });

    const result = await eraseAggregate(dynamoAdminDeps({ ...fixture.options, client: racing }), input);
    fixture.clock.advance(1_000);
    await flow.sweepOnce();
    const delivered = await flow.deliverAll();

    expect(result).toMatchObject({ messagesDeleted: 0, skippedInFlight: [id(1)] });
    expect(delivered.map((d) => d.kind)).toEqual(['DUPLICATE']);
    const { Item } = await fixture.db.send(new GetCommand({ TableName: 'inventory', Key: { sku: 'SKU-1' } }));
    expect((Item as { available?: number } | undefined)?.available).toBe(8);
  });

  it('files an ERASE audit row with counts only, no payload and no message data', async () => {
    await storeMessage(fixture, { messageId: id(1), aggregateId: 'order-7', status: CONFIRMED });

    const { actionId } = await eraseAggregate(fixture.deps, input);

    const rows = await auditRows(fixture, 'aggregate:order-7');
    expect(rows).toEqual([
      {
        subject: 'aggregate:order-7',
        actionId,
        at: expect.any(String),
        action: 'ERASE',
        actor: 'local:ana',
        reason: 'GDPR request #881',
        details: {
          messagesDeleted: 1,
          parkedRowsDeleted: 0,
          claimCheckObjectsDeleted: 0,
          claimCheckObjectsNotDeleted: 0,
          skippedInFlight: 0,
        },
      },
    ]);
    expect(JSON.stringify(rows)).not.toContain('customer-1');
  });

  it('keeps and reports a message replayed while the erase runs', async () => {
    await storeMessage(fixture, { messageId: id(1), aggregateId: 'order-7', status: FAILED });
    await storeMessage(fixture, { messageId: id(2), aggregateId: 'order-7', status: CONFIRMED });
    let replayed = false;
    const racing = interceptedClient(fixture, async (command) => {
      // An operator replays message 1 just after the erase checked the aggregate.
      if (!replayed && command instanceof DeleteCommand && command.input.TableName === 'outbox') {
        replayed = true;
        const stored = await storedMessage(fixture, id(1));
        await fixture.db.send(new PutCommand({ TableName: 'outbox', Item: { ...stored, status: PENDING } }));
      }
    });

    const result = await eraseAggregate(dynamoAdminDeps({ ...fixture.options, client: racing }), input);

    expect(result).toMatchObject({ messagesDeleted: 1, skippedInFlight: [id(1)] });
    expect((await storedMessage(fixture, id(1)))?.status).toBe(PENDING);
  });

  it('reads each message by key for its status, headers, topic, place and subscriber only, and passes over one deleted since the index named it', async () => {
    await storeMessage(fixture, { messageId: id(1), aggregateId: 'order-7', status: CONFIRMED });
    await storeMessage(fixture, { messageId: id(2), aggregateId: 'order-7', status: FAILED });
    let deletedFirst = false;
    const racing = interceptedClient(fixture, async (command) => {
      // Another erase removes message 1 after the index listed it, before it is read by key.
      if (!deletedFirst && command instanceof GetCommand && command.input.TableName === 'outbox') {
        deletedFirst = true;
        await fixture.db.send(new DeleteCommand({ TableName: 'outbox', Key: { messageId: id(1) } }));
      }
    });

    const result = await eraseAggregate(dynamoAdminDeps({ ...fixture.options, client: racing }), input);

    expect(result).toMatchObject({ messagesDeleted: 1, skippedInFlight: [] });
    const reads = fixture.commands.filter(
      (command): command is GetCommand =>
        command instanceof GetCommand && command.input.TableName === 'outbox',
    );
    // Read concurrently: in any order.
    expect(reads.map((read) => read.input.Key?.messageId).sort()).toEqual([id(1), id(2)]);
    for (const read of reads) {
      // Its place and subscriber say what a subscriber's erase lists; never its payload.
      expect(Object.values(read.input.ExpressionAttributeNames ?? {}).sort()).toEqual([
        'headers',
        'messageId',
        'orderKey',
        'seq',
        'status',
        'subscriber',
        'topic',
      ]);
    }
  });

  it('erases nothing, and says so, for an aggregate without messages', async () => {
    await expect(eraseAggregate(fixture.deps, input)).resolves.toMatchObject({
      messagesDeleted: 0,
      parkedRowsDeleted: 0,
    });
  });

  it('refuses an erase without a reason', async () => {
    await expect(eraseAggregate(fixture.deps, { ...input, reason: ' ' })).rejects.toBeInstanceOf(
      ReasonRequiredError,
    );
    expect(fixture.commands).toEqual([]);
  });

  describe('with claim-checked payloads', () => {
    const BUCKET = 'claims';
    const checkedIn = (n: number) => ({
      messageId: id(n),
      status: CONFIRMED,
      headers: { [CLAIM_CHECK_HEADER]: '1' },
      payload: {
        claimCheck: {
          bucket: BUCKET,
          key: `claim-check/${id(n)}/abc.json`,
          size: 3,
          sha256: 'ab'.repeat(32),
        },
      },
    });
    const put = (store: MemoryObjectStore, n: number) =>
      store.put({
        bucket: BUCKET,
        key: `claim-check/${id(n)}/abc.json`,
        size: 3,
        sha256: 'ab'.repeat(32),
        body: new TextEncoder().encode('{}'),
      });

    it("deletes each erased message's object, and nobody else's", async () => {
      const store = new MemoryObjectStore();
      store.createBucket(BUCKET);
      await Promise.all([1, 2].map((n) => put(store, n)));
      await storeMessage(fixture, { ...checkedIn(1), aggregateId: 'order-7' });
      await storeMessage(fixture, { ...checkedIn(2), aggregateId: 'order-8' });

      const result = await eraseAggregate({ ...fixture.deps, claimCheck: { store, bucket: BUCKET } }, input);

      expect(result).toMatchObject({
        messagesDeleted: 1,
        claimCheckObjectsDeleted: 1,
        claimCheckObjectsNotDeleted: [],
      });
      expect(store.keys(BUCKET)).toEqual([`claim-check/${id(2)}/abc.json`]);
    });

    it('reports an object it could not delete, with the message erased', async () => {
      const failing = new MemoryObjectStore();
      failing.createBucket(BUCKET);
      failing.remove = async () => {
        throw new Error('S3 is down');
      };
      await storeMessage(fixture, { ...checkedIn(1), aggregateId: 'order-7' });

      const result = await eraseAggregate(
        { ...fixture.deps, claimCheck: { store: failing, bucket: BUCKET } },
        input,
      );

      expect(result).toMatchObject({
        messagesDeleted: 1,
        claimCheckObjectsDeleted: 0,
        claimCheckObjectsNotDeleted: [`claim-check/${id(1)}/abc.json`],
      });
      expect((await auditRows(fixture, 'aggregate:order-7'))[0]?.details).toMatchObject({
        claimCheckObjectsNotDeleted: 1,
      });
    });

    it('refuses, deleting nothing, when it has no claim-check bucket to delete the payloads from', async () => {
      await storeMessage(fixture, { ...checkedIn(1), aggregateId: 'order-7' });

      await expect(eraseAggregate(fixture.deps, input)).rejects.toThrow(/CLAIM_CHECK_BUCKET is not set/);
      expect(await storedMessage(fixture, id(1))).toBeDefined();
      expect(fixture.db.itemCount('audit')).toBe(0);
    });
  });
});

describe('eraseAggregate of messages delivered to subscribers', () => {
  const orderKey = 'order#order-7';
  const BUCKET = 'claims';
  const reference = (n: number) => ({
    bucket: BUCKET,
    key: `claim-check/${id(n)}/abc.json`,
    size: 3,
    sha256: 'ab'.repeat(32),
  });

  /** Message `n` of order-7 as the writer stores it for two subscribers: a delivery row each. */
  async function storeDeliveries(
    n: number,
    statuses: Readonly<Record<string, MessageStatus>>,
    extra: Partial<OutboxItem> = {},
  ): Promise<void> {
    for (const [subscriber, status] of Object.entries(statuses)) {
      await storeMessage(fixture, {
        messageId: `${id(n)}#${subscriber}`,
        subscriber,
        aggregateId: 'order-7',
        status,
        ...(extra.seq === undefined ? {} : { orderKey: `${orderKey}#${subscriber}`, seq: extra.seq }),
        ...(extra.headers === undefined ? {} : { headers: extra.headers, payload: extra.payload }),
      });
    }
  }

  async function outboxRows(): Promise<Record<string, unknown>[]> {
    const { Items = [] } = await fixture.db.asDocumentClient().send(new ScanCommand({ TableName: 'outbox' }));
    return Items;
  }

  const isControl = (row: Record<string, unknown>) => String(row.topic).startsWith('outbox.');

  it('deletes every delivery, sends each subscriber one outbox.erase listing its messages by id and place, and reads no subscriber inbox', async () => {
    await storeDeliveries(1, { inventory: CONFIRMED, loyalty: CONFIRMED }, { seq: 1 });
    await storeDeliveries(2, { inventory: FAILED, loyalty: CONFIRMED }, { seq: 2 });
    await storeDeliveries(3, { loyalty: CANCELLED });

    const result = await eraseAggregate(fixture.deps, input);

    expect(result).toMatchObject({ messagesDeleted: 3, parkedRowsDeleted: 0, skippedInFlight: [] });
    expect(result.erasesSent.map((sent) => [sent.subscriber, sent.topic]).sort()).toEqual([
      ['inventory', 'outbox.erase'],
      ['loyalty', 'outbox.erase'],
    ]);
    const rows = await outboxRows();
    expect(rows.filter((row) => !isControl(row))).toEqual([]);
    const bySubscriber = Object.fromEntries(rows.map((row) => [row.subscriber, row]));
    const listed = (subscriber: string) => {
      const payload = bySubscriber[subscriber]?.payload as { messages?: { messageId: string }[] } | undefined;
      return [...(payload?.messages ?? [])].sort((a, b) => a.messageId.localeCompare(b.messageId));
    };
    // The order key as the messages carried it on the wire; never a payload.
    expect(listed('inventory')).toEqual([
      { messageId: id(1), orderKey, seq: 1 },
      { messageId: id(2), orderKey, seq: 2 },
    ]);
    expect(listed('loyalty')).toEqual([
      { messageId: id(1), orderKey, seq: 1 },
      { messageId: id(2), orderKey, seq: 2 },
      { messageId: id(3) },
    ]);
    for (const sent of result.erasesSent) {
      expect(bySubscriber[sent.subscriber]).toMatchObject({
        messageId: `${sent.messageId}#${sent.subscriber}`,
        topic: 'outbox.erase',
        aggregateId: 'order-7',
        status: PENDING,
      });
    }
    expect(JSON.stringify(rows)).not.toContain('customer-1');
    expect(
      fixture.commands.filter(
        (command) =>
          (command instanceof GetCommand || command instanceof DeleteCommand) &&
          command.input.TableName !== 'outbox',
      ),
    ).toEqual([]);
    expect((await auditRows(fixture, 'aggregate:order-7'))[0]?.details).toMatchObject({
      messagesDeleted: 3,
      erasesSent: result.erasesSent.map((sent) => `${sent.subscriber} ${sent.messageId}`),
    });
  });

  it('refuses while one subscriber’s delivery is in flight, and sends no erase', async () => {
    await storeDeliveries(1, { inventory: CONFIRMED, loyalty: SENT });

    await expect(eraseAggregate(fixture.deps, input)).rejects.toMatchObject({
      httpStatus: 409,
      inFlight: [{ messageId: `${id(1)}#loyalty`, status: SENT }],
    });
    expect(await outboxRows()).toHaveLength(2);
  });

  it('is not held by, and does not erase, the outbox’s own messages about the aggregate', async () => {
    await storeMessage(fixture, {
      messageId: `${id(8)}#inventory`,
      subscriber: 'inventory',
      topic: 'outbox.erase',
      aggregateId: 'order-7',
      status: PENDING,
      payload: { messages: [{ messageId: id(1) }] },
    });
    await storeDeliveries(2, { inventory: CONFIRMED });

    const result = await eraseAggregate(fixture.deps, input);

    expect(result).toMatchObject({ messagesDeleted: 1 });
    expect(await storedMessage(fixture, `${id(8)}#inventory`)).toMatchObject({ status: PENDING });
  });

  it('sends an aggregate of more messages than one erase lists as several erases to the subscriber', async () => {
    const count = MAX_ERASE_ENTRIES + 1;
    for (let n = 1; n <= count; n += 1) await storeDeliveries(n, { inventory: CONFIRMED });

    const result = await eraseAggregate(fixture.deps, input);

    expect(result.messagesDeleted).toBe(count);
    const sizes = (await outboxRows())
      .map((row) => (row.payload as { messages: unknown[] }).messages.length)
      .sort((a, b) => a - b);
    expect(sizes).toEqual([1, MAX_ERASE_ENTRIES]);
  });

  it('deletes a message’s claim-checked object once, and keeps it while one of its deliveries was replayed meanwhile', async () => {
    const store = new MemoryObjectStore();
    store.createBucket(BUCKET);
    for (const n of [1, 2]) {
      await store.put({ ...reference(n), body: new TextEncoder().encode('{}') });
      await storeDeliveries(
        n,
        { inventory: CONFIRMED, loyalty: FAILED },
        { headers: { [CLAIM_CHECK_HEADER]: '1' }, payload: { claimCheck: reference(n) } },
      );
    }
    let replayed = false;
    const racing = interceptedClient(fixture, async (command) => {
      // An operator replays loyalty's delivery of message 2 just after the erase checked the aggregate.
      if (!replayed && command instanceof DeleteCommand && command.input.TableName === 'outbox') {
        replayed = true;
        const stored = await storedMessage(fixture, `${id(2)}#loyalty`);
        await fixture.db.send(new PutCommand({ TableName: 'outbox', Item: { ...stored, status: PENDING } }));
      }
    });
    const deps = {
      ...dynamoAdminDeps({ ...fixture.options, client: racing }),
      claimCheck: { store, bucket: BUCKET },
    };

    const result = await eraseAggregate(deps, input);

    expect(result).toMatchObject({
      messagesDeleted: 2,
      skippedInFlight: [`${id(2)}#loyalty`],
      claimCheckObjectsDeleted: 1,
    });
    expect(store.keys(BUCKET)).toEqual([reference(2).key]);
  });
});
