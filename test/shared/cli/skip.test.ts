import { GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { afterEach, describe, expect, it } from 'vitest';
import { formatSkipOrderGap } from '../../../shared/cli/format-output.ts';
import type { CliClients } from '../../../shared/cli/run-cli.ts';
import { outboxOfStack } from '../../../shared/cli/stack-discovery.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import {
  OUTBOX_ROLE_METADATA,
  OUTBOX_TOPICS_METADATA,
} from '../../../shared/observability/resource-roles.ts';
import { testMessageId } from '../../support/factories.ts';
import { type AdminFixture, adminFixture, storedMessage, storeMessage } from '../admin/admin-fixture.ts';
import { cloudFormationWith, run, STACK, summariesOf } from './cli-fixture.ts';

const ORDERED_TOPICS = { 'order.created': { scope: 'order', gapTimeoutMs: 300_000 } };
const orderKey = 'order#order-1';

/** The smallest stack the CLI finds an outbox in, with an ordered topic in the relay's environment. */
const TEMPLATE = {
  Resources: {
    Outbox: { Type: 'AWS::DynamoDB::Table', Metadata: { [OUTBOX_ROLE_METADATA]: 'outbox-table' } },
    Audit: { Type: 'AWS::DynamoDB::Table', Metadata: { [OUTBOX_ROLE_METADATA]: 'audit-table' } },
    Inbox: {
      Type: 'AWS::DynamoDB::Table',
      Metadata: { [OUTBOX_ROLE_METADATA]: 'inbox-table', [OUTBOX_TOPICS_METADATA]: ['order.created'] },
    },
    Relay: {
      Type: 'AWS::Lambda::Function',
      Metadata: { [OUTBOX_ROLE_METADATA]: 'relay' },
      Properties: {
        Environment: {
          Variables: {
            DUE_SHARDS: '4',
            RETENTION_DAYS: '30',
            ORDERED_TOPICS: JSON.stringify(ORDERED_TOPICS),
          },
        },
      },
    },
  },
};

let fixture: AdminFixture;
let restore: (() => void) | undefined;

afterEach(() => {
  restore?.();
  restore = undefined;
});

/** Clients over the in-memory admin fixture, found through a mocked CloudFormation stack. */
function clients(): CliClients {
  fixture = adminFixture({ orderedTopics: ORDERED_TOPICS });
  const { mock, client } = cloudFormationWith({ template: TEMPLATE });
  restore = () => mock.restore();
  return { cloudFormation: client, adminDeps: () => fixture.deps, clock: fixture.clock.now };
}

const skipArgs = (...rest: string[]) => ['--stack', STACK, 'skip', '--order-key', orderKey, ...rest];

async function storeSeq(seq: number, status: MessageStatus): Promise<string> {
  const messageId = testMessageId(seq);
  await storeMessage(fixture, { messageId, status, aggregateId: 'order-1', orderKey, seq });
  return messageId;
}

async function putCursor(lastSeq: number): Promise<void> {
  await fixture.db.send(
    new PutCommand({
      TableName: 'inbox',
      Item: { messageId: `cursor#${orderKey}`, lastSeq, updatedAt: 'x' },
    }),
  );
}

describe('outbox skip', () => {
  it('skips the gap and prints what it did: the message, each consumer’s cursor, the successor', async () => {
    const c = clients();
    const skipped = await storeSeq(2, MessageStatus.FAILED);
    const parked = await storeSeq(3, MessageStatus.SENT);
    await putCursor(1);

    const result = await run(skipArgs('--seq', '2', '--reason', 'payload unfixable'), {
      clients: c,
      env: { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' },
    });

    expect(result.code).toBe(0);
    const lines = result.stdout.trimEnd().split('\n');
    expect(lines).toEqual([
      expect.stringMatching(
        new RegExp(`^skipped ${orderKey} seq 2 \\(message ${skipped}, order\\.created\\); audit \\w+$`),
      ),
      '  message   FAILED → CANCELLED',
      '  consumer  inbox: cursor 1 → 2',
      `  next      seq 3 (message ${parked}) SENT → PENDING: the sweeper sends it again`,
    ]);
    const { Item } = await fixture.db.send(
      new GetCommand({ TableName: 'inbox', Key: { messageId: `cursor#${orderKey}` } }),
    );
    expect((Item as { lastSeq?: number } | undefined)?.lastSeq).toBe(2);
    const history = (await storedMessage(fixture, skipped))?.history as { by?: string }[] | undefined;
    expect(history?.at(-1)?.by).toMatch(/^local:/);
  });

  it('prints the result as one JSON document with --json', async () => {
    const c = clients();
    await storeSeq(1, MessageStatus.PENDING);

    const result = await run([...skipArgs('--seq', '1', '--reason', 'withdrawn'), '--json'], {
      clients: c,
      env: { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' },
    });

    expect(result.code).toBe(0);
    expect(JSON.parse(result.stdout)).toMatchObject({
      action: 'SKIP',
      orderKey,
      seq: 1,
      from: 'PENDING',
      cursors: [{ inboxTable: 'inbox', lastSeq: null, outcome: 'MOVED' }],
    });
  });

  it('exits 2 without --reason or with a seq that is not a whole number, 4 for an earlier gap or a SENT message', async () => {
    const noReason = await run(skipArgs('--seq', '2'), { clients: clients() });
    expect(noReason.code).toBe(2);
    expect(noReason.stderr).toContain("required option '--reason <text>' not specified");
    const badSeq = await run(skipArgs('--seq', 'two', '--reason', 'x'), { clients: clients() });
    expect(badSeq.code).toBe(2);
    expect(badSeq.stderr).toContain('--seq must be a whole number above 0, got two');

    const c = clients();
    await storeSeq(3, MessageStatus.FAILED);
    await storeSeq(4, MessageStatus.SENT);
    await putCursor(1);
    const env = { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' };
    const earlier = await run(skipArgs('--seq', '3', '--reason', 'x'), { clients: c, env });
    expect(earlier.code).toBe(4);
    expect(earlier.stderr).toContain('so seq 2 is missing before seq 3; skip or replay seq 2 first');
    const sent = await run(skipArgs('--seq', '4', '--reason', 'x'), { clients: c, env });
    expect(sent.code).toBe(4);
    expect(sent.stderr).toContain(
      `message ${testMessageId(4)} is SENT; skip needs PENDING or FAILED or CANCELLED`,
    );
  });

  it('says when there is nothing to do', () => {
    expect(
      formatSkipOrderGap({
        action: 'SKIP',
        orderKey,
        seq: 2,
        messageId: 'm-2',
        topic: 'order.created',
        aggregateId: 'order-1',
        from: MessageStatus.CANCELLED,
        to: MessageStatus.CANCELLED,
        cancelled: false,
        gone: false,
        cursors: [{ inboxTable: 'inbox', lastSeq: 5, outcome: 'ALREADY_PAST' }],
        successor: { messageId: 'm-3', seq: 3, status: MessageStatus.CONFIRMED, action: 'LEFT' },
        changed: false,
        at: '2026-01-01T00:00:00.000Z',
      }),
    ).toBe(
      [
        `nothing to do for ${orderKey} seq 2 (message m-2, order.created): already skipped`,
        '  message   already CANCELLED',
        '  consumer  inbox: already at seq 5, nothing to do',
        '  next      seq 3 (message m-3) is CONFIRMED: nothing to do',
      ].join('\n'),
    );
  });
});

describe('formatSkipOrderGap of a subscriber’s sequence', () => {
  it('names the skip sent to the subscriber and where its outcome will show', () => {
    const text = formatSkipOrderGap({
      action: 'SKIP',
      orderKey: `${orderKey}#inventory`,
      seq: 1,
      messageId: 'm-1#inventory',
      topic: 'order.created',
      aggregateId: 'order-1',
      from: MessageStatus.FAILED,
      to: MessageStatus.CANCELLED,
      cancelled: true,
      gone: false,
      cursors: [],
      subscriber: 'inventory',
      skipSent: { subscriber: 'inventory', messageId: 'c-1', topic: 'outbox.skip' },
      changed: true,
      at: '2026-01-01T00:00:00.000Z',
      actionId: 'a-1',
    });

    expect(text.split('\n').slice(0, 3)).toEqual([
      `skipped ${orderKey}#inventory seq 1 (message m-1#inventory, order.created); audit a-1`,
      '  message   FAILED → CANCELLED',
      '  consumer  subscriber inventory: sent outbox.skip c-1; its receipt confirms it SKIPPED, ALREADY_PAST or EARLIER_GAP (show c-1#inventory)',
    ]);
  });
});

describe('stack discovery of ordering', () => {
  it('takes ORDERED_TOPICS from the relay’s environment in the template, and none where it is absent', () => {
    const summaries = summariesOf(TEMPLATE.Resources);
    expect(outboxOfStack({ stackName: STACK, template: TEMPLATE, summaries }).orderedTopics).toEqual(
      ORDERED_TOPICS,
    );
    const unordered = structuredClone(TEMPLATE) as { Resources: Record<string, unknown> };
    unordered.Resources.Relay = {
      Type: 'AWS::Lambda::Function',
      Metadata: { [OUTBOX_ROLE_METADATA]: 'relay' },
      Properties: { Environment: { Variables: { DUE_SHARDS: '4', RETENTION_DAYS: '30' } } },
    };
    expect(outboxOfStack({ stackName: STACK, template: unordered, summaries }).orderedTopics).toEqual({});
  });
});
