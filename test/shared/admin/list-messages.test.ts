import { GetCommand, PutCommand, QueryCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { InvalidAdminRequestError, ListFilterRequiredError } from '../../../shared/admin/admin-errors.ts';
import { listMessages, type MessagePage } from '../../../shared/admin/list-messages.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { dueShardOf } from '../../../shared/outbox/outbox-item.ts';
import { FIXED_NOW, testMessageId } from '../../support/factories.ts';
import { type AdminFixture, adminFixture, commandNames, SHARDS, storeMessage } from './admin-fixture.ts';

const { PENDING, SENT, FAILED, CONFIRMED, CANCELLED } = MessageStatus;
const id = testMessageId;
const createdAt = (minutes: number) => new Date(FIXED_NOW.getTime() + minutes * 60_000).toISOString();

let fixture: AdminFixture;

beforeEach(() => {
  fixture = adminFixture();
});

/** Every page of a listing, following the cursors. */
async function allPages(input: Parameters<typeof listMessages>[1]): Promise<MessagePage[]> {
  const pages: MessagePage[] = [];
  let cursor: string | undefined;
  do {
    const page = await listMessages(fixture.deps, { ...input, ...(cursor === undefined ? {} : { cursor }) });
    pages.push(page);
    cursor = page.cursor;
  } while (cursor !== undefined);
  return pages;
}

const idsOf = (pages: readonly MessagePage[]) => pages.flatMap((page) => page.items.map((m) => m.messageId));

/** The queries the admin sent: index and partition. */
function queries(): { index: string | undefined; partition: unknown }[] {
  return fixture.commands
    .filter((command): command is QueryCommand => command instanceof QueryCommand)
    .map((command) => ({
      index: command.input.IndexName,
      partition: command.input.ExpressionAttributeValues?.[':pk'],
    }));
}

describe('listMessages', () => {
  it('lists FAILED messages through the attention index, every shard of it, and never sends a Scan', async () => {
    for (let n = 1; n <= 12; n += 1) {
      await storeMessage(fixture, { messageId: id(n), status: n % 3 === 0 ? PENDING : FAILED });
    }

    const pages = await allPages({ status: FAILED });

    expect(idsOf(pages).sort()).toEqual([1, 2, 4, 5, 7, 8, 10, 11].map(id).sort());
    expect(commandNames(fixture).every((name) => name === 'QueryCommand')).toBe(true);
    expect(fixture.commands.some((command) => command instanceof ScanCommand)).toBe(false);
    expect(new Set(queries().map((query) => query.index))).toEqual(new Set(['attention']));
    expect(queries().map((query) => query.partition)).toEqual(
      Array.from({ length: SHARDS }, (_, shard) => `FAILED#${shard}`),
    );
  });

  it('pages through every shard with opaque cursors: each message once, no page over the limit', async () => {
    const expected: string[] = [];
    for (let n = 1; n <= 23; n += 1) {
      await storeMessage(fixture, { messageId: id(n), status: CANCELLED, createdAt: createdAt(n) });
      expected.push(id(n));
    }
    await storeMessage(fixture, { messageId: id(99), status: FAILED });

    const pages = await allPages({ status: CANCELLED, limit: 5 });

    expect(idsOf(pages).sort()).toEqual(expected.sort());
    expect(new Set(idsOf(pages)).size).toBe(23);
    expect(pages.every((page) => page.items.length <= 5)).toBe(true);
    expect(pages.length).toBeGreaterThanOrEqual(5);
    expect(pages.at(-1)?.cursor).toBeUndefined();
    for (const page of pages.slice(0, -1)) expect(page.cursor).toMatch(/^[A-Za-z0-9_-]+$/);
    // The shards are spread: the messages really came from several partitions.
    expect(new Set(expected.map((messageId) => dueShardOf(messageId, SHARDS))).size).toBeGreaterThan(1);
    expect(commandNames(fixture)).not.toContain('ScanCommand');
  });

  it('lists PENDING and SENT through the due index, each status on its own', async () => {
    await storeMessage(fixture, { messageId: id(1), status: PENDING });
    await storeMessage(fixture, { messageId: id(2), status: SENT });
    await storeMessage(fixture, { messageId: id(3), status: PENDING });
    await storeMessage(fixture, { messageId: id(4), status: CONFIRMED });

    expect(idsOf(await allPages({ status: PENDING })).sort()).toEqual([id(1), id(3)].sort());
    expect(idsOf(await allPages({ status: SENT }))).toEqual([id(2)]);
    expect(new Set(queries().map((query) => query.index))).toEqual(new Set(['due']));
  });

  it("lists an aggregate's messages in every status, CONFIRMED included, through byAggregate", async () => {
    await storeMessage(fixture, { messageId: id(1), aggregateId: 'order-7', status: CONFIRMED });
    await storeMessage(fixture, { messageId: id(2), aggregateId: 'order-7', status: FAILED });
    await storeMessage(fixture, { messageId: id(3), aggregateId: 'order-8', status: CONFIRMED });

    const all = await allPages({ aggregateId: 'order-7' });
    const confirmed = await allPages({ aggregateId: 'order-7', status: CONFIRMED });

    expect(idsOf(all)).toEqual([id(1), id(2)]);
    expect(idsOf(confirmed)).toEqual([id(1)]);
    expect(queries().map((query) => query.index)).toEqual(['byAggregate', 'byAggregate']);
  });

  it("filters an aggregate's messages by status, topic and since as read by key, never on the keys-only index", async () => {
    await storeMessage(fixture, {
      messageId: id(1),
      aggregateId: 'order-7',
      status: FAILED,
      createdAt: createdAt(5),
    });
    await storeMessage(fixture, {
      messageId: id(2),
      aggregateId: 'order-7',
      status: FAILED,
      createdAt: createdAt(-5),
    });
    await storeMessage(fixture, {
      messageId: id(3),
      aggregateId: 'order-7',
      status: FAILED,
      topic: 'payment.captured',
      createdAt: createdAt(5),
    });
    await storeMessage(fixture, {
      messageId: id(4),
      aggregateId: 'order-7',
      status: CONFIRMED,
      createdAt: createdAt(5),
    });
    await storeMessage(fixture, {
      messageId: id(5),
      aggregateId: 'order-8',
      status: FAILED,
      createdAt: createdAt(5),
    });

    const pages = await allPages({
      aggregateId: 'order-7',
      status: FAILED,
      topic: 'order.created',
      since: createdAt(0),
    });

    expect(idsOf(pages)).toEqual([id(1)]);
    expect(pages[0]?.items[0]).toMatchObject({
      status: FAILED,
      topic: 'order.created',
      aggregateId: 'order-7',
    });
    const query = fixture.commands.find((command) => command instanceof QueryCommand) as QueryCommand;
    expect(query.input.IndexName).toBe('byAggregate');
    expect(query.input.FilterExpression).toBeUndefined();
    const reads = fixture.commands.filter((command): command is GetCommand => command instanceof GetCommand);
    expect(reads.map((read) => read.input.Key?.messageId)).toEqual([1, 2, 3, 4].map(id));
    for (const read of reads) {
      expect(Object.values(read.input.ExpressionAttributeNames ?? {})).not.toContain('payload');
    }
  });

  it("pages an aggregate's messages with cursors: each once, in id order, no page over the limit", async () => {
    for (let n = 1; n <= 13; n += 1) {
      await storeMessage(fixture, {
        messageId: id(n),
        aggregateId: 'order-7',
        status: n % 2 === 0 ? FAILED : CONFIRMED,
      });
    }

    const all = await allPages({ aggregateId: 'order-7', limit: 4 });
    const failed = await allPages({ aggregateId: 'order-7', status: FAILED, limit: 4 });

    expect(idsOf(all)).toEqual(Array.from({ length: 13 }, (_, n) => id(n + 1)));
    expect(all.map((page) => page.items.length)).toEqual([4, 4, 4, 1]);
    expect(idsOf(failed)).toEqual([2, 4, 6, 8, 10, 12].map(id));
    expect(failed.every((page) => page.items.length <= 4)).toBe(true);
    expect(failed.at(-1)?.cursor).toBeUndefined();
  });

  it('answers a short page with a cursor rather than reading more than 1000 messages of an aggregate for it', async () => {
    for (let n = 1; n <= 1_050; n += 1) {
      await storeMessage(fixture, { messageId: id(n), aggregateId: 'order-7', status: CONFIRMED });
    }
    await storeMessage(fixture, { messageId: id(1_051), aggregateId: 'order-7', status: FAILED });

    const first = await listMessages(fixture.deps, { aggregateId: 'order-7', status: FAILED, limit: 500 });
    const reads = fixture.commands.filter((command) => command instanceof GetCommand).length;
    const rest = await listMessages(fixture.deps, {
      aggregateId: 'order-7',
      status: FAILED,
      limit: 500,
      ...(first.cursor === undefined ? {} : { cursor: first.cursor }),
    });

    expect(first.items).toEqual([]);
    expect(first.cursor).toBeDefined();
    expect(reads).toBe(1_000);
    expect(rest.items.map((item) => item.messageId)).toEqual([id(1_051)]);
    expect(rest.cursor).toBeUndefined();
  });

  it('lists everything but CONFIRMED of a topic through both indexes when no status is given', async () => {
    await storeMessage(fixture, { messageId: id(1), status: PENDING });
    await storeMessage(fixture, { messageId: id(2), status: SENT });
    await storeMessage(fixture, { messageId: id(3), status: FAILED });
    await storeMessage(fixture, { messageId: id(4), status: CANCELLED });
    await storeMessage(fixture, { messageId: id(5), status: CONFIRMED });
    await storeMessage(fixture, { messageId: id(6), status: FAILED, topic: 'payment.captured' });

    const pages = await allPages({ topic: 'order.created' });

    expect(idsOf(pages).sort()).toEqual([1, 2, 3, 4].map(id).sort());
    expect(new Set(queries().map((query) => query.index))).toEqual(new Set(['due', 'attention']));
  });

  it('keeps messages created since an instant: a key range on the attention index, a filter on the due index', async () => {
    await storeMessage(fixture, { messageId: id(1), status: FAILED, createdAt: createdAt(-10) });
    await storeMessage(fixture, { messageId: id(2), status: FAILED, createdAt: createdAt(10) });
    await storeMessage(fixture, { messageId: id(3), status: PENDING, createdAt: createdAt(-10) });
    await storeMessage(fixture, { messageId: id(4), status: PENDING, createdAt: createdAt(10) });

    expect(idsOf(await allPages({ status: FAILED, since: createdAt(0) }))).toEqual([id(2)]);
    expect(idsOf(await allPages({ status: PENDING, since: createdAt(0) }))).toEqual([id(4)]);
    const [attention, due] = [FAILED, PENDING].map((status) =>
      fixture.commands.find(
        (command) =>
          command instanceof QueryCommand &&
          command.input.IndexName === (status === FAILED ? 'attention' : 'due'),
      ),
    ) as QueryCommand[];
    expect(attention?.input.KeyConditionExpression).toBe('#pk = :pk AND #createdAt >= :since');
    expect(due?.input.FilterExpression).toContain('#createdAt >= :since');
  });

  it('summarises each message without its payload', async () => {
    await storeMessage(fixture, { messageId: id(1), status: FAILED, attempts: 10, resends: 2 });

    const { items } = await listMessages(fixture.deps, { status: FAILED });

    expect(items).toEqual([
      {
        messageId: id(1),
        topic: 'order.created',
        aggregateId: 'order-1',
        status: FAILED,
        attempts: 10,
        resends: 2,
        lastError: 'QueueDoesNotExist',
        createdAt: FIXED_NOW.toISOString(),
        updatedAt: FIXED_NOW.toISOString(),
      },
    ]);
    const query = fixture.commands[0] as QueryCommand;
    expect(Object.values(query.input.ExpressionAttributeNames ?? {})).not.toContain('payload');
  });

  it('lists an item written by another tool with what it has, without hiding the others', async () => {
    await fixture.db.send(
      new PutCommand({
        TableName: 'outbox',
        Item: { messageId: id(1), status: FAILED, attentionKey: `FAILED#0`, createdAt: createdAt(0) },
      }),
    );

    const { items } = await listMessages(fixture.deps, { status: FAILED });

    expect(items).toEqual([expect.objectContaining({ messageId: id(1), topic: '', attempts: 0 })]);
  });

  it('answers a short page with a cursor rather than reading on without bound, and the cursors reach the match', async () => {
    // 40 PENDING messages of another topic ahead of the one asked for, in its shard: each query of 1 filters its
    // item out.
    for (let n = 1; n <= 40; n += 1) {
      await storeMessage(fixture, {
        messageId: id(n),
        status: PENDING,
        topic: 'payment.captured',
        dueShard: '0',
        nextAttemptAt: createdAt(n),
      });
    }
    await storeMessage(fixture, {
      messageId: id(41),
      status: PENDING,
      dueShard: '0',
      nextAttemptAt: createdAt(99),
    });

    const first = await listMessages(fixture.deps, { status: PENDING, topic: 'order.created', limit: 1 });
    expect(fixture.commands).toHaveLength(25);
    const pages = await allPages({ status: PENDING, topic: 'order.created', limit: 1 });

    expect(first.items).toEqual([]);
    expect(first.cursor).toBeDefined();
    expect(idsOf(pages)).toEqual([id(41)]);
  });

  it('pages 50 by default and at most 500', async () => {
    for (let n = 1; n <= 60; n += 1) await storeMessage(fixture, { messageId: id(n), status: FAILED });

    expect((await listMessages(fixture.deps, { status: FAILED })).items).toHaveLength(50);
    expect((await listMessages(fixture.deps, { status: FAILED, limit: 500 })).items).toHaveLength(60);
  });

  it.each([
    { filter: {}, problem: /give a status .*, a topic, a subscriber, a since instant or an aggregateId/ },
    { filter: { status: CONFIRMED }, problem: /CONFIRMED messages are listed only for an aggregateId/ },
    { filter: { status: CONFIRMED, topic: 'order.created' }, problem: /only for an aggregateId/ },
  ])(
    'refuses a listing that would read every message ($filter) with a 400 saying what to give',
    async ({ filter, problem }) => {
      const error = await listMessages(fixture.deps, filter).catch((e: unknown) => e);

      expect(error).toBeInstanceOf(ListFilterRequiredError);
      expect((error as ListFilterRequiredError).httpStatus).toBe(400);
      expect((error as Error).message).toMatch(problem);
      expect(fixture.commands).toEqual([]);
    },
  );

  it.each([
    { input: { status: 'LOST' }, field: 'status' },
    { input: { status: FAILED, limit: 0 }, field: 'limit' },
    { input: { status: FAILED, limit: 501 }, field: 'limit' },
    { input: { status: FAILED, limit: 2.5 }, field: 'limit' },
    { input: { status: FAILED, since: 'yesterday' }, field: 'since' },
    { input: { status: FAILED, cursor: 'not a cursor' }, field: 'cursor' },
    {
      input: { status: FAILED, cursor: Buffer.from('{"v":1,"s":-1}').toString('base64url') },
      field: 'cursor',
    },
  ])('refuses a malformed $field with a 400 naming it', async ({ input, field }) => {
    const error = await listMessages(fixture.deps, input).catch((e: unknown) => e);

    expect(error).toBeInstanceOf(InvalidAdminRequestError);
    expect((error as InvalidAdminRequestError).field).toBe(field);
    expect((error as InvalidAdminRequestError).httpStatus).toBe(400);
  });

  it('refuses a cursor made for other filters', async () => {
    for (let n = 1; n <= 3; n += 1) await storeMessage(fixture, { messageId: id(n), status: FAILED });
    const { cursor } = await listMessages(fixture.deps, { status: FAILED, limit: 1 });

    await expect(
      listMessages(fixture.deps, { status: CANCELLED, limit: 1, ...(cursor ? { cursor } : {}) }),
    ).rejects.toThrow(/belongs to a listing with other filters/);
  });
});
