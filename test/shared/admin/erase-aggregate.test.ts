import { DeleteCommand, GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { AggregateInFlightError, ReasonRequiredError } from '../../../shared/admin/admin-errors.ts';
import { eraseAggregate } from '../../../shared/admin/erase-aggregate.ts';
import { replayMessage } from '../../../shared/admin/message-actions.ts';
import { dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import { CLAIM_CHECK_HEADER } from '../../../shared/claim-check/claim-check-reference.ts';
import { MemoryObjectStore } from '../../../shared/memory/memory-object-store.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
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

  it('reads each message by key for its status and headers only, and passes over one deleted since the index named it', async () => {
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
      expect(Object.values(read.input.ExpressionAttributeNames ?? {}).sort()).toEqual([
        'headers',
        'messageId',
        'status',
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
