/**
 * The `outbox` CLI on a producer and its subscribers, each in its own local stack: the producer's commands per
 * subscriber (list, show, replay, cancel, stats), and a subscriber's own stack (stats, redrive; the rest refused,
 * naming the producer's stack).
 */
import { monotonicFactory } from 'ulid';
import { afterEach, describe, expect, it } from 'vitest';
import type { SubscriberAdminDeps } from '../../../shared/admin/subscriber-admin.ts';
import { AUDIT_KEYS, DynamoAuditLog } from '../../../shared/aws/audit-table.ts';
import type { CliClients } from '../../../shared/cli/run-cli.ts';
import type { DiscoveredSubscriber } from '../../../shared/cli/stack-discovery.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import { envelope, manualClock, sqsRecord, testMessageId } from '../../support/factories.ts';
import { MemoryAdminQueues } from '../admin/admin-fixture.ts';
import { failedForLoyalty, receivers } from '../admin/fan-out-admin-fixture.ts';
import { run } from './cli-fixture.ts';
import { cloudFormationOf, producerTemplate, subscriberTemplate, type Template } from './stack-templates.ts';

const EMULATOR = { AWS_ENDPOINT_URL: 'http://127.0.0.1:5000' };
const LOCAL_STACKS = {
  'OutboxOrders-local': producerTemplate(),
  'OutboxInventory-local': subscriberTemplate('inventory'),
  'OutboxLoyalty-local': subscriberTemplate('loyalty', { auditTable: false }),
};

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

/** CloudFormation knowing `stacks`, and the clients the CLI runs with over them. */
function cloudFormation(
  stacks: Readonly<Record<string, Template>>,
  clients: Partial<CliClients> = {},
): CliClients {
  const { mock, client } = cloudFormationOf(stacks);
  restore = () => mock.restore();
  return { cloudFormation: client, ...clients };
}

describe('on the producer’s stack, per subscriber', () => {
  async function producer() {
    const scene = await failedForLoyalty();
    const clients = cloudFormation(LOCAL_STACKS, {
      adminDeps: (outbox) => {
        // What discovery found in the producer's template: its subscribers.
        expect(Object.keys(outbox.subscriptions['order.created'] ?? {})).toEqual(['inventory', 'loyalty']);
        return scene.deps;
      },
      clock: scene.w.clock.now,
      sleep: async () => {},
    });
    const outbox = (...argv: string[]) => run(argv, { env: EMULATOR, clients });
    return { ...scene, outbox };
  }

  it("lists loyalty's FAILED delivery by the message's id and its subscriber, on the stack holding the outbox", async () => {
    const { outbox, first } = await producer();
    const listed = await outbox('list', '--status', 'FAILED', '--subscriber', 'loyalty');
    expect(listed.code).toBe(0);
    expect(listed.stdout).toMatch(
      new RegExp(`^${first.messageId} +loyalty +FAILED +order\\.created +SKU-1`, 'm'),
    );
    const json = await outbox('list', '--status', 'FAILED', '--subscriber', 'inventory', '--json');
    expect(JSON.parse(json.stdout).items).toEqual([]);
  });

  it("replays loyalty's delivery alone: the next sweep sends it to loyalty, never to inventory", async () => {
    const { outbox, first, w } = await producer();
    w.take('inventory');
    w.down.clear();
    const replayed = await outbox(
      'replay',
      first.messageId,
      '--subscriber',
      'loyalty',
      '--reason',
      'loyalty is back',
    );
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toContain(
      `replayed loyalty's delivery of ${first.messageId} (order.created, SKU-1): FAILED → PENDING`,
    );
    w.clock.advance(60_000);
    await w.sweep();
    expect(receivers(w, first.messageId)).toEqual(['loyalty']);
  });

  it('replays every failed delivery without --subscriber and says the CONFIRMED one is never sent again', async () => {
    const { outbox, first } = await producer();
    const replayed = await outbox('replay', first.messageId, '--reason', 'loyalty is back');
    expect(replayed.code).toBe(0);
    expect(replayed.stdout).toMatch(/^ {2}inventory +left as it is: CONFIRMED: .*never sent again$/m);
    expect(replayed.stdout).toMatch(/^ {2}loyalty +FAILED → PENDING$/m);

    const again = await outbox('replay', first.messageId, '--reason', 'again');
    expect(again.code).toBe(4);
    expect(again.stderr).toContain(
      '(inventory CONFIRMED, loyalty PENDING); replay needs FAILED or CANCELLED',
    );
  });

  it('shows each delivery, its history, and the audit naming the subscriber', async () => {
    const { outbox, first } = await producer();
    await outbox('replay', first.messageId, '--subscriber', 'loyalty', '--reason', 'loyalty is back');
    const shown = await outbox('show', first.messageId);
    expect(shown.code).toBe(0);
    expect(shown.stdout).toMatch(/^status +PENDING \(from its 2 deliveries\)$/m);
    expect(shown.stdout).toMatch(/^inventory +CONFIRMED +1 +APPLIED /m);
    expect(shown.stdout).toMatch(/^loyalty +PENDING +0 /m);
    expect(shown.stdout).toContain('history of the delivery to loyalty');
    expect(shown.stdout).toMatch(/ REPLAY +local:\S+ +loyalty +loyalty is back$/m);
  });

  it('cancels one delivery, and exits 4 naming the subscribers for one the message does not have', async () => {
    const { outbox, second, statusOf } = await producer();
    const cancelled = await outbox(
      'cancel',
      second.messageId,
      '--subscriber',
      'loyalty',
      '--reason',
      'no points',
    );
    expect(cancelled.code).toBe(0);
    expect(await statusOf(second.messageId)).toEqual({ inventory: 'PENDING', loyalty: 'CANCELLED' });
    const missing = await outbox('cancel', second.messageId, '--subscriber', 'billing', '--reason', 'x');
    expect(missing.code).toBe(4);
    expect(missing.stderr).toContain(
      `no delivery of message ${second.messageId} to subscriber billing: it is delivered to inventory, loyalty`,
    );
  });

  it("counts per subscriber, and one subscriber's deliveries with --subscriber", async () => {
    const { outbox } = await producer();
    const stats = await outbox('stats');
    expect(stats.stdout).toMatch(/^order\.created +loyalty +1 +0 +1 +0 /m);
    expect(stats.stdout).toMatch(/^order\.created +inventory +1 +0 +0 +0 /m);
    const loyalty = JSON.parse((await outbox('stats', '--subscriber', 'loyalty', '--json')).stdout);
    expect(loyalty).toMatchObject({ subscriber: 'loyalty', totals: { PENDING: 1, FAILED: 1 } });
  });

  it('recovers one subscriber of a topic: replays its FAILED delivery alone, waits for it, and names where its dead letters are', async () => {
    const scene = await failedForLoyalty();
    const { w, first } = scene;
    w.take('inventory');
    w.down.clear();
    // While recover waits, the sweeper sends the replayed delivery, loyalty applies it and its receipt confirms it.
    const clients = cloudFormation(LOCAL_STACKS, {
      adminDeps: () => scene.deps,
      clock: w.clock.now,
      sleep: async () => {
        w.clock.advance(60_000);
        await w.sweep();
        await w.consume('loyalty');
        await w.applyReceipts();
      },
    });
    const outbox = (...argv: string[]) => run(argv, { env: EMULATOR, clients });

    const unknown = await outbox('recover', '--topic', 'order.created', '--subscriber', 'billing');
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('is not a subscriber of order.created (inventory, loyalty)');

    const recovered = await outbox(
      'recover',
      '--topic',
      'order.created',
      '--subscriber',
      'loyalty',
      '--wait',
      '600',
    );
    expect(recovered.stdout).toContain('recover order.created (subscriber loyalty)');
    expect(recovered.stdout).toMatch(/2\. replay +1 of 1 FAILED message\(s\) replayed/);
    expect(recovered.stdout).toContain(
      'the dead letters of loyalty are in their own stacks: outbox redrive --stack <its stack> --topic order.created',
    );
    expect(recovered.stdout).toContain('5. result      resolved: nothing remains');
    // The topic's own queue (a topic being drained has one) is not the subscriber's: none of its dead letters move.
    expect(recovered.stderr).not.toContain('moving the dead letters');
    expect(recovered.stderr).toContain('replaying the FAILED messages of order.created');
    expect(recovered.code).toBe(0);
    expect(await scene.statusOf(first.messageId)).toEqual({ inventory: 'CONFIRMED', loyalty: 'CONFIRMED' });
    // Inventory's delivery of it, CONFIRMED before, was never sent again (its queue has only the second message).
    expect(w.take('inventory').filter((body) => body.includes(first.messageId))).toEqual([]);
  });

  it('bulk-replays the FAILED deliveries of a topic to one subscriber', async () => {
    const { outbox } = await producer();
    const dry = await outbox(
      'replay',
      '--topic',
      'order.created',
      '--subscriber',
      'loyalty',
      '--dry-run',
      '--reason',
      'r',
    );
    expect(dry.stdout).toMatch(/^dry run: would replay 1 message\(s\)$/m);
    expect(dry.stdout).toMatch(/ +loyalty +FAILED /);
  });
});

describe('on a subscriber’s own stack', () => {
  const clock = manualClock();

  /** The inventory stack's queue and DLQ in memory, its audit table too; what the CLI discovered of it. */
  function inventory(options: { readonly auditTable?: boolean } = {}) {
    const stacks = { ...LOCAL_STACKS, 'OutboxInventory-local': subscriberTemplate('inventory', options) };
    const db = new MemoryDocumentClient({
      audit: { partitionKey: AUDIT_KEYS.partitionKey, sortKey: AUDIT_KEYS.sortKey },
    });
    let found: DiscoveredSubscriber | undefined;
    let queues: MemoryQueues | undefined;
    const subscriberDeps = (subscriber: DiscoveredSubscriber): SubscriberAdminDeps => {
      found = subscriber;
      const queue = subscriber.topicQueues['order.created'] ?? '';
      const dlq = subscriber.deadLetterQueues['order.created'] ?? '';
      if (queues === undefined) {
        queues = new MemoryQueues(
          {
            [queue]: { visibilityTimeoutMs: 30_000, maxReceiveCount: 5, deadLetterQueueUrl: dlq },
            [dlq]: { visibilityTimeoutMs: 30_000 },
          },
          clock.now,
        );
        // Two messages the consumer could not apply.
        for (const n of [1, 2]) {
          queues.deadLetter({
            queueUrl: dlq,
            record: sqsRecord(envelope({ messageId: testMessageId(n), topic: 'order.created' })),
            reason: 'MAX_RECEIVES',
            lastError: 'Error: inventory table down',
          });
        }
      }
      return {
        subscriber: subscriber.subscriber,
        queues: new MemoryAdminQueues(queues),
        topicQueues: subscriber.topicQueues,
        deadLetterQueues: subscriber.deadLetterQueues,
        inboxTables: subscriber.inboxTables,
        ...(subscriber.auditTable === undefined
          ? {}
          : { audit: new DynamoAuditLog({ client: db.asDocumentClient(), auditTable: 'audit' }) }),
        clock: clock.now,
        newId: monotonicFactory(),
        sleep: async () => {},
      };
    };
    const clients = cloudFormation(stacks, {
      subscriberDeps,
      adminDeps: () => {
        throw new Error("a subscriber's stack has no outbox to build the admin on");
      },
    });
    const outbox = (...argv: string[]) =>
      run(['--stack', 'OutboxInventory-local', ...argv], { env: EMULATOR, clients });
    const depth = (which: 'topicQueues' | 'deadLetterQueues') =>
      queues?.peek(found?.[which]['order.created'] ?? '').length ?? 0;
    return { outbox, db, depth, found: () => found };
  }

  it('shows its queue’s and dead-letter queue’s depths and its inbox', async () => {
    const { outbox } = inventory();
    const stats = await outbox('stats');
    expect(stats.code).toBe(0);
    expect(stats.stdout).toMatch(/^subscriber inventory at /);
    expect(stats.stdout).toMatch(/InventoryQueue +order\.created, order\.cancelled +0 +0$/m);
    expect(stats.stdout).toMatch(/InventoryQueueDlq +order\.created, order\.cancelled +2 +0$/m);
    expect(stats.stdout).toMatch(/InventoryInbox-X1 +order\.created, order\.cancelled$/m);
  });

  it('redrives its dead letters back to its queue, journalled in its own audit table', async () => {
    const { outbox, db, depth } = inventory();
    const redriven = await outbox('redrive', '--topic', 'order.created', '--reason', 'inventory table back');
    expect(redriven.code).toBe(0);
    expect(redriven.stdout).toContain('moved 2 dead letter(s) back');
    expect(depth('topicQueues')).toBe(2);
    expect(depth('deadLetterQueues')).toBe(0);
    const audit = db.items('audit');
    expect(audit.filter((row) => String(row.subject).startsWith('redrive:'))).toHaveLength(2);
    expect(audit.filter((row) => String(row.subject).startsWith('dlq:'))).toEqual([
      expect.objectContaining({ action: 'REDRIVE', reason: 'inventory table back' }),
    ]);
  });

  it('refuses a redrive that would move messages without an audit table, and still lists them in a dry run', async () => {
    const { outbox, depth } = inventory({ auditTable: false });
    const refused = await outbox('redrive', '--reason', 'r');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("subscriber inventory's stack has no audit table");
    expect(depth('deadLetterQueues')).toBe(2);
    const dry = await outbox('redrive', '--dry-run', '--reason', 'r');
    expect(dry.code).toBe(0);
    expect(dry.stdout).toContain('dry run: would move 2 of 2 dead letter(s)');
  });

  it('refuses the commands of the producer’s outbox, naming the producer’s stack', async () => {
    const { outbox } = inventory();
    for (const argv of [
      ['list', '--status', 'FAILED'],
      ['show', testMessageId(1)],
      ['replay', testMessageId(1), '--reason', 'r'],
    ]) {
      const refused = await outbox(...argv);
      expect(refused.code).toBe(2);
      expect(refused.stderr).toContain(
        `stack OutboxInventory-local: is subscriber inventory's own stack (its queue, dead-letter queue and inbox), which holds no outbox: outbox ${argv[0]} works on the producer's stack`,
      );
      expect(refused.stderr).toContain('--stack OutboxOrders-local');
    }
  });

  it('refuses a --subscriber other than its own', async () => {
    const { outbox } = inventory();
    const refused = await outbox('stats', '--subscriber', 'loyalty');
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain("is subscriber inventory's stack");
  });
});

describe('choosing among local stacks', () => {
  it('lists the local stacks and what each holds when several hold an outbox', async () => {
    const clients = cloudFormation({
      'OutboxOrders-local': producerTemplate(),
      'OutboxReturns-local': producerTemplate(),
      'OutboxInventory-local': subscriberTemplate('inventory'),
    });
    const result = await run(['stats'], { env: EMULATOR, clients });
    expect(result.code).toBe(2);
    expect(result.stderr).toContain(
      'more than one of the local stacks on the emulator at http://127.0.0.1:5000 holds an outbox: OutboxOrders-local (outbox), OutboxReturns-local (outbox), OutboxInventory-local (subscriber inventory); choose one with --stack',
    );
  });
});
