import { type DynamoDBDocumentClient, GetCommand, PutCommand, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import fc from 'fast-check';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { seededRandom } from '../../../infra/dev/drill/faults.ts';
import { inboxDeliveryCheck } from '../../../shared/aws/inbox-table.ts';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { cancelUpdate } from '../../../shared/aws/outbox-table/operator-updates.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { dueShardOf, type OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import type { SweepStore } from '../../../shared/outbox/outbox-store.ts';
import type { MessagePublisher, PublishResult } from '../../../shared/relay/message-publisher.ts';
import { toEnvelope } from '../../../shared/relay/relay-messages.ts';
import { messageBody } from '../../../shared/relay/wire-format.ts';
import { backoffCeilingMs, type RetryPolicy } from '../../../shared/retry/retry-policy.ts';
import {
  DEFAULT_SWEEPER_SETTINGS,
  type DeliveryVerdict,
  type SweeperDeps,
  type SweeperSettings,
  sweep,
} from '../../../shared/sweeper/sweep.ts';
import {
  FIXED_NOW,
  type ManualClock,
  MEMORY_TABLE_SCHEMAS,
  manualClock,
  outboxItem,
  testMessageId,
} from '../../support/factories.ts';

const QUEUE = 'memory://order-created';
const POLICY: RetryPolicy = { baseDelayMs: 1_000, multiplier: 2, maxDelayMs: 60_000, maxAttempts: 4 };
const CONFIRM_DEADLINE_MS = 300_000;
const SETTINGS: SweeperSettings = { ...DEFAULT_SWEEPER_SETTINGS, leaseMs: 60_000, recheckAfterMs: 120_000 };
const SEND_ERROR = 'KMS.DisabledException: the queue key is disabled';

const id = testMessageId;
/** An ISO time `offsetMs` from the fixed start. */
const at = (offsetMs: number) => new Date(FIXED_NOW.getTime() + offsetMs).toISOString();

type Method = keyof SweepStore;

/**
 * The real store, watched: counts the sweeper's rounds (each round reads a page of shard 0) and can fail a
 * call once, as a throttled or unreachable DynamoDB would.
 */
class ObservedStore implements SweepStore {
  rounds = 0;
  readonly #inner: SweepStore;
  readonly #faults: { method: Method; firstArg: string | undefined; left: number }[] = [];

  constructor(inner: SweepStore) {
    this.#inner = inner;
  }

  /** The next call of `method` (for `firstArg`: a message id or shard, when given) throws. */
  failOnce(method: Method, firstArg?: string): void {
    this.#faults.push({ method, firstArg, left: 1 });
  }

  #inject(method: Method, firstArg: string): void {
    const fault = this.#faults.find(
      (f) => f.method === method && f.left > 0 && (f.firstArg === undefined || f.firstArg === firstArg),
    );
    if (!fault) return;
    fault.left -= 1;
    throw new Error(`ProvisionedThroughputExceededException: injected ${method} failure`);
  }

  async findDue(...args: Parameters<SweepStore['findDue']>) {
    // A round reads a page of shard 0; the look-ahead of a run with nothing due reads one entry.
    if (args[0] === '0' && args[2] !== 1) this.rounds += 1;
    this.#inject('findDue', args[0]);
    return this.#inner.findDue(...args);
  }
  async claim(...args: Parameters<SweepStore['claim']>) {
    this.#inject('claim', args[0].messageId);
    return this.#inner.claim(...args);
  }
  async requeue(...args: Parameters<SweepStore['requeue']>) {
    this.#inject('requeue', args[0]);
    return this.#inner.requeue(...args);
  }
  async postpone(...args: Parameters<SweepStore['postpone']>) {
    this.#inject('postpone', args[0].messageId);
    return this.#inner.postpone(...args);
  }
  async release(...args: Parameters<SweepStore['release']>) {
    this.#inject('release', args[0].messageId);
    return this.#inner.release(...args);
  }
  async markSent(...args: Parameters<SweepStore['markSent']>) {
    this.#inject('markSent', args[0].messageId);
    return this.#inner.markSent(...args);
  }
  async recordSendFailure(...args: Parameters<SweepStore['recordSendFailure']>) {
    this.#inject('recordSendFailure', args[0].messageId);
    return this.#inner.recordSendFailure(...args);
  }
  async confirm(...args: Parameters<SweepStore['confirm']>) {
    this.#inject('confirm', args[0]);
    return this.#inner.confirm(...args);
  }
  async failUnreadable(...args: Parameters<SweepStore['failUnreadable']>) {
    this.#inject('failUnreadable', args[0].messageId);
    return this.#inner.failUnreadable(...args);
  }
  async findInSequence(...args: Parameters<SweepStore['findInSequence']>) {
    this.#inject('findInSequence', args[0].orderKey);
    return this.#inner.findInSequence(...args);
  }
}

/** A publisher over the in-memory queues whose SQS rejects the entries of `rejected` message ids. */
function rejecting(queues: MemoryQueues, rejected: ReadonlySet<string>): MessagePublisher {
  return {
    async publishBatch(queueUrl: string, messages: readonly Envelope[]): Promise<PublishResult> {
      const accepted = messages.filter((m) => !rejected.has(m.messageId));
      if (accepted.length > 0) await queues.publishBatch(queueUrl, accepted);
      return {
        sent: accepted.map((m) => m.messageId),
        failed: messages
          .filter((m) => rejected.has(m.messageId))
          .map((m) => ({ messageId: m.messageId, error: SEND_ERROR })),
      };
    },
  };
}

let clock: ManualClock;
let db: MemoryDocumentClient;
let queues: MemoryQueues;

beforeEach(() => {
  clock = manualClock();
  db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
  queues = new MemoryQueues({ [QUEUE]: { visibilityTimeoutMs: 30_000 } }, clock.now);
});

interface SweeperOptions extends Partial<Omit<SweeperDeps, 'settings'>> {
  /** Rounds the run may start before its time budget is spent. @default 1 */
  readonly rounds?: number;
  readonly settings?: Partial<SweeperSettings>;
  /** The document client the store uses. @default the in-memory one */
  readonly client?: DynamoDBDocumentClient;
}

/** A sweeper on the in-memory table and queues, with a budget of `rounds` rounds. */
function sweeper(options: SweeperOptions = {}): { deps: SweeperDeps; store: ObservedStore } {
  const { rounds = 1, settings, client, ...overrides } = options;
  const store = new ObservedStore(
    new DynamoOutboxStore({
      client: client ?? db.asDocumentClient(),
      tableName: 'outbox',
      confirmDeadlineMs: CONFIRM_DEADLINE_MS,
    }),
  );
  const deps: SweeperDeps = {
    publisher: queues,
    store,
    queueFor: (topic) => (topic === 'order.created' ? QUEUE : undefined),
    retryPolicyFor: () => POLICY,
    clock: clock.now,
    random: () => 0.5,
    owner: 'sweeper-a',
    deliveryCheckFor: () => undefined,
    remainingMs: () => (store.rounds < rounds ? 60_000 : 0),
    sleep: async () => {},
    settings: { ...SETTINGS, ...settings },
    ...overrides,
  };
  return { deps, store };
}

/** `deps` with its store running `before` just ahead of each SENT mark (another actor's move lands first). */
function interceptingMarks(deps: SweeperDeps, before: () => Promise<void>): SweeperDeps {
  const store = deps.store;
  return {
    ...deps,
    store: new Proxy(store, {
      get(target, property, receiver) {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        if (property !== 'markSent') return value.bind(target);
        return async (...args: Parameters<SweepStore['markSent']>) => {
          await before();
          return target.markSent(...args);
        };
      },
    }),
  };
}

async function putMessage(overrides: Partial<OutboxItem>): Promise<OutboxItem> {
  const item = outboxItem(overrides);
  await db.send(new PutCommand({ TableName: 'outbox', Item: { ...item } }));
  return item;
}

async function message(messageId: string): Promise<Record<string, unknown> | undefined> {
  return (await db.send(new GetCommand({ TableName: 'outbox', Key: { messageId } }))).Item as
    | Record<string, unknown>
    | undefined;
}

/** Message ids of everything SQS holds, in send order (a resend shows up twice). */
function sentIds(): string[] {
  return queues.peek(QUEUE).map(({ body }) => (JSON.parse(body) as Envelope).messageId);
}

/** Ids in the due index at `now`, across every shard. */
async function dueAt(now: Date): Promise<string[]> {
  const store = new DynamoOutboxStore({ client: db.asDocumentClient(), tableName: 'outbox' });
  const pages = await Promise.all(
    Array.from({ length: SETTINGS.dueShards }, (_, shard) => store.findDue(String(shard), now, 1_000)),
  );
  return pages.flat().map((entry) => entry.messageId);
}

describe('sweep', () => {
  describe('PENDING messages', () => {
    it('sends a PENDING message whose stream record was lost once it falls due, and marks it SENT', async () => {
      const lost = await putMessage({ messageId: id(1), nextAttemptAt: at(-1_000) });
      const inGrace = await putMessage({ messageId: id(2), nextAttemptAt: at(30_000) });

      const report = await sweep(sweeper().deps);

      expect(report).toMatchObject({ rounds: 1, claimed: 1, sent: 1, errors: 0, unrecorded: 0 });
      expect(queues.peek(QUEUE).map((m) => m.body)).toEqual([messageBody(toEnvelope(lost))]);
      const sent = await message(id(1));
      expect(sent).toMatchObject({
        status: MessageStatus.SENT,
        attempts: 1,
        sentAt: FIXED_NOW.toISOString(),
        confirmBy: at(CONFIRM_DEADLINE_MS),
      });
      expect(sent).not.toHaveProperty('leaseOwner');
      expect(await message(id(2))).toEqual(inGrace);
    });

    it.each([0, 0.5, 0.999_999])(
      'schedules a retry after a failed send: attempts + 1, backed off within the policy, lastError set (draw %s)',
      async (draw) => {
        await putMessage({ messageId: id(1), attempts: 1, nextAttemptAt: at(-1_000) });
        const { deps } = sweeper({ publisher: rejecting(queues, new Set([id(1)])), random: () => draw });

        const report = await sweep(deps);

        expect(report).toMatchObject({ claimed: 1, sent: 0, retryScheduled: 1, failed: 0 });
        expect(sentIds()).toEqual([]);
        const retried = await message(id(1));
        expect(retried).toMatchObject({ status: MessageStatus.PENDING, attempts: 2, lastError: SEND_ERROR });
        expect(retried).not.toHaveProperty('leaseOwner');
        const next = Date.parse(String(retried?.nextAttemptAt));
        expect(next).toBeGreaterThanOrEqual(FIXED_NOW.getTime());
        expect(next).toBeLessThanOrEqual(FIXED_NOW.getTime() + backoffCeilingMs(POLICY, 2));
        // Still in the due index, so the next run retries it when the backoff ends.
        expect(await dueAt(new Date(next))).toEqual([id(1)]);
      },
    );

    it('moves a message SQS refused maxAttempts times over several delivery rounds to FAILED, however fresh its round', async () => {
      // Two rounds started by reconciliation (a sender stopped between its SENT mark and its send): attempts began
      // again at 0 each time, the refusals did not.
      await putMessage({
        messageId: id(1),
        attempts: 0,
        resends: 2,
        refusals: POLICY.maxAttempts - 1,
        nextAttemptAt: at(-1_000),
      });
      const { deps } = sweeper({ publisher: rejecting(queues, new Set([id(1)])) });

      const report = await sweep(deps);

      expect(report).toMatchObject({ claimed: 1, failed: 1, retryScheduled: 0 });
      expect(await message(id(1))).toMatchObject({
        status: MessageStatus.FAILED,
        attempts: 1,
        refusals: POLICY.maxAttempts,
      });
    });

    it('moves a message to FAILED when its last attempt fails, keeping payload and lastError, out of the due index', async () => {
      const original = await putMessage({
        messageId: id(1),
        attempts: POLICY.maxAttempts - 1,
        nextAttemptAt: at(-1_000),
      });
      const { deps } = sweeper({ publisher: rejecting(queues, new Set([id(1)])) });

      const report = await sweep(deps);

      expect(report).toMatchObject({ claimed: 1, failed: 1, retryScheduled: 0 });
      const failed = await message(id(1));
      expect(failed).toMatchObject({
        status: MessageStatus.FAILED,
        attempts: POLICY.maxAttempts,
        lastError: SEND_ERROR,
        payload: original.payload,
        aggregateId: original.aggregateId,
      });
      expect(failed).not.toHaveProperty('dueShard');
      expect(failed).not.toHaveProperty('nextAttemptAt');
      expect(await dueAt(new Date(FIXED_NOW.getTime() + 365 * 86_400_000))).toEqual([]);
    });

    it('fails a due message that has no attempts left without sending it again, keeping its lastError', async () => {
      await putMessage({
        messageId: id(1),
        attempts: POLICY.maxAttempts,
        lastError: 'not confirmed by the downstream before the deadline; resending',
        nextAttemptAt: at(-1_000),
      });
      await putMessage({ messageId: id(2), attempts: POLICY.maxAttempts, nextAttemptAt: at(-1_000) });

      const report = await sweep(sweeper().deps);

      expect(report).toMatchObject({ claimed: 2, failed: 2, sent: 0 });
      expect(sentIds()).toEqual([]);
      expect(await message(id(1))).toMatchObject({
        status: MessageStatus.FAILED,
        lastError: 'not confirmed by the downstream before the deadline; resending',
      });
      expect(await message(id(2))).toMatchObject({
        status: MessageStatus.FAILED,
        lastError: `no confirmation after ${POLICY.maxAttempts} attempts`,
      });
    });

    it('records a failure for a topic with no routed queue instead of dropping the message', async () => {
      await putMessage({ messageId: id(1), topic: 'order.shipped', nextAttemptAt: at(-1_000) });

      const report = await sweep(sweeper().deps);

      expect(report.retryScheduled).toBe(1);
      expect(await message(id(1))).toMatchObject({
        status: MessageStatus.PENDING,
        attempts: 1,
        lastError: 'no queue is routed for topic "order.shipped"',
      });
    });
  });

  describe('claims', () => {
    it('reclaims and sends a message whose claimant crashed (lease expired)', async () => {
      await putMessage({
        messageId: id(1),
        leaseOwner: 'crashed-sweeper',
        leaseUntil: at(-1_000),
        nextAttemptAt: at(-1_000),
      });

      const report = await sweep(sweeper().deps);

      expect(report).toMatchObject({ claimed: 1, sent: 1 });
      expect(sentIds()).toEqual([id(1)]);
      const sent = await message(id(1));
      expect(sent).toMatchObject({ status: MessageStatus.SENT });
      expect(sent).not.toHaveProperty('leaseOwner');
    });

    it('leaves alone a message freshly claimed by another sweeper', async () => {
      const claimedPending = await putMessage({
        messageId: id(1),
        leaseOwner: 'sweeper-b',
        leaseUntil: at(30_000),
        nextAttemptAt: at(30_000),
      });
      const claimedSent = await putMessage({
        messageId: id(2),
        status: MessageStatus.SENT,
        attempts: 1,
        leaseOwner: 'sweeper-b',
        leaseUntil: at(30_000),
        nextAttemptAt: at(30_000),
      });

      const report = await sweep(sweeper({ rounds: 3 }).deps);

      expect(report).toMatchObject({ claimed: 0, lostClaims: 0, sent: 0 });
      expect(sentIds()).toEqual([]);
      expect(await message(id(1))).toEqual(claimedPending);
      expect(await message(id(2))).toEqual(claimedSent);
    });

    it('sends each message exactly once when two sweepers run at the same time', async () => {
      const ids = Array.from({ length: 12 }, (_, n) => id(n + 1));
      await fc.assert(
        fc.asyncProperty(
          fc.integer({ min: 1, max: 2 ** 31 - 1 }),
          fc.integer({ min: 2, max: 3 }),
          async (seed, count) => {
            db = new MemoryDocumentClient(MEMORY_TABLE_SCHEMAS);
            queues = new MemoryQueues({ [QUEUE]: { visibilityTimeoutMs: 30_000 } }, clock.now);
            for (const messageId of ids) await putMessage({ messageId, nextAttemptAt: at(-1_000) });
            const random = seededRandom(seed);
            const sweepers = Array.from({ length: count }, (_, n) =>
              sweeper({
                owner: `sweeper-${n}`,
                rounds: 2,
                client: yielding(db, random),
                publisher: yieldingPublisher(queues, random),
              }),
            );

            const reports = await Promise.all(sweepers.map(({ deps }) => sweep(deps)));

            expect(sentIds().sort()).toEqual(ids);
            expect(reports.reduce((sum, r) => sum + r.claimed, 0)).toBe(ids.length);
            expect(reports.reduce((sum, r) => sum + r.sent, 0)).toBe(ids.length);
            for (const messageId of ids) {
              expect(await message(messageId)).toMatchObject({ status: MessageStatus.SENT, attempts: 1 });
            }
          },
        ),
        { numRuns: 25 },
      );
    });
  });

  describe('SENT messages past their confirmation deadline', () => {
    const overdue = (n: number) => ({
      messageId: id(n),
      status: MessageStatus.SENT,
      attempts: 1,
      sentAt: at(-CONFIRM_DEADLINE_MS - 60_000),
      nextAttemptAt: at(-60_000),
    });
    const withInboxCheck = () => ({
      deliveryCheckFor: () => inboxDeliveryCheck(db.asDocumentClient(), 'inbox'),
    });

    async function inboxHas(messageId: string): Promise<void> {
      await db.send(new PutCommand({ TableName: 'inbox', Item: { messageId, outcome: 'APPLIED' } }));
    }

    it('files a SENT message found due before its confirmBy under it, in one write, without claiming, asking or resending', async () => {
      // SENT keeps the nextAttemptAt it had (the stream grace), so it falls due before its deadline.
      await putMessage({
        messageId: id(1),
        status: MessageStatus.SENT,
        attempts: 1,
        sentAt: at(-50_000),
        nextAttemptAt: at(-1_000),
        confirmBy: at(250_000),
      });
      const check = vi.fn(async () => ({ verdict: 'MISSING' as const }));
      const { deps, store } = sweeper({ deliveryCheckFor: () => check });
      const claim = vi.spyOn(store, 'claim');

      const report = await sweep(deps);

      expect(report).toMatchObject({ claimed: 0, postponed: 1, requeued: 0, sent: 0 });
      expect(claim).not.toHaveBeenCalled();
      expect(check).not.toHaveBeenCalled();
      expect(sentIds()).toEqual([]);
      const postponed = await message(id(1));
      expect(postponed).toMatchObject({ status: MessageStatus.SENT, nextAttemptAt: at(250_000) });
      expect(postponed).not.toHaveProperty('leaseOwner');
      expect(await dueAt(new Date(Date.parse(at(249_999))))).toEqual([]);
      expect(await dueAt(new Date(Date.parse(at(250_000))))).toEqual([id(1)]);
    });

    it('leaves a SENT message alone when it was confirmed between the index read and the postponement', async () => {
      await putMessage({
        messageId: id(1),
        status: MessageStatus.SENT,
        attempts: 1,
        nextAttemptAt: at(-1_000),
        confirmBy: at(250_000),
      });
      const { deps, store } = sweeper();
      const findDue = store.findDue.bind(store);
      vi.spyOn(store, 'findDue').mockImplementation(async (...args) => {
        const entries = await findDue(...args);
        // The consumer confirms it just after the sweeper read the index.
        await new DynamoOutboxStore({ client: db.asDocumentClient(), tableName: 'outbox' }).confirm(
          id(1),
          clock.now(),
        );
        return entries;
      });

      const report = await sweep(deps);

      expect(report).toMatchObject({ postponed: 0, errors: 0 });
      expect(await message(id(1))).toMatchObject({ status: MessageStatus.CONFIRMED });
    });

    it('reconciles a SENT message once its confirmBy has passed', async () => {
      await putMessage({ ...overdue(1), confirmBy: at(-1_000) });
      await inboxHas(id(1));

      const report = await sweep(sweeper(withInboxCheck()).deps);

      expect(report).toMatchObject({ claimed: 1, postponed: 0, reconciledConfirmed: 1 });
    });

    it('confirms a message the downstream has (its inbox row exists), with its outcome, without resending it', async () => {
      await putMessage(overdue(1));
      await inboxHas(id(1));

      const report = await sweep(sweeper(withInboxCheck()).deps);

      expect(report).toMatchObject({ claimed: 1, reconciledConfirmed: 1, requeued: 0, sent: 0 });
      expect(sentIds()).toEqual([]);
      const confirmed = await message(id(1));
      expect(confirmed).toMatchObject({
        status: MessageStatus.CONFIRMED,
        confirmedAt: FIXED_NOW.toISOString(),
        outcome: 'APPLIED',
      });
      expect(confirmed).not.toHaveProperty('leaseOwner');
      expect(await dueAt(new Date(FIXED_NOW.getTime() + 365 * 86_400_000))).toEqual([]);
    });

    it('requeues and resends a message the downstream never got: SENT again in a new delivery round', async () => {
      await putMessage(overdue(1));

      const report = await sweep(sweeper(withInboxCheck()).deps);

      expect(report).toMatchObject({ claimed: 1, requeued: 1, sent: 1, reconciledConfirmed: 0 });
      expect(sentIds()).toEqual([id(1)]);
      expect(await message(id(1))).toMatchObject({
        status: MessageStatus.SENT,
        attempts: 1,
        resends: 1,
        sentAt: FIXED_NOW.toISOString(),
        // The second delivery round waits twice as long for its confirmation.
        confirmBy: at(2 * CONFIRM_DEADLINE_MS),
      });
    });

    it('resends when the topic has no delivery check (consumers dedupe)', async () => {
      await putMessage(overdue(1));

      const report = await sweep(sweeper().deps);

      expect(report).toMatchObject({ requeued: 1, sent: 1 });
      expect(sentIds()).toEqual([id(1)]);
    });

    it('keeps a message SENT and releases it when the downstream cannot be asked; asks again later', async () => {
      await putMessage(overdue(1));
      const unreachable = sweeper({
        deliveryCheckFor: () => async () => {
          throw new Error('inbox table unreachable');
        },
      });

      const report = await sweep(unreachable.deps);

      expect(report).toMatchObject({ claimed: 1, requeued: 0, reconciledConfirmed: 0, sent: 0 });
      expect(sentIds()).toEqual([]);
      const released = await message(id(1));
      expect(released).toMatchObject({
        status: MessageStatus.SENT,
        attempts: 1,
        nextAttemptAt: at(SETTINGS.recheckAfterMs),
      });
      expect(released).not.toHaveProperty('leaseOwner');
      expect(released).not.toHaveProperty('leaseUntil');

      // Not due before the recheck time…
      expect((await sweep(sweeper(withInboxCheck()).deps)).claimed).toBe(0);
      // …and settled once it is.
      await inboxHas(id(1));
      clock.advance(SETTINGS.recheckAfterMs);
      const later = await sweep(sweeper(withInboxCheck()).deps);
      expect(later.reconciledConfirmed).toBe(1);
      expect(await message(id(1))).toMatchObject({ status: MessageStatus.CONFIRMED });
    });

    it('starts a new delivery round when it resends: attempts back to 0, resends + 1', async () => {
      await putMessage({ ...overdue(1), attempts: POLICY.maxAttempts });

      const report = await sweep(sweeper().deps);

      expect(report).toMatchObject({ requeued: 1, sent: 1, failed: 0 });
      expect(sentIds()).toEqual([id(1)]);
      expect(await message(id(1))).toMatchObject({ status: MessageStatus.SENT, attempts: 1, resends: 1 });
    });

    it('fails a message resent as often as the policy allows, instead of resending it again', async () => {
      await putMessage({ ...overdue(1), resends: POLICY.maxAttempts });

      const report = await sweep(sweeper().deps);

      expect(report).toMatchObject({ requeued: 1, failed: 1, sent: 0 });
      expect(sentIds()).toEqual([]);
      expect(await message(id(1))).toMatchObject({
        status: MessageStatus.FAILED,
        lastError: `not confirmed by the downstream after ${POLICY.maxAttempts + 1} delivery rounds`,
      });
    });
  });

  describe('messages that can never be sent as stored', () => {
    it.each([
      ['a BigInt', { total: 10n }],
      ['a Set', { skus: new Set(['A']) }],
      ['a typed array', { bytes: new Uint8Array([1]) }],
    ])(
      'fails a due message whose payload holds %s, with the path, and still sends the others of the run',
      async (_kind, payload) => {
        for (const n of [1, 2, 3]) await putMessage({ messageId: id(n), nextAttemptAt: at(-1_000) });
        await putMessage({ messageId: id(4), nextAttemptAt: at(-1_000), payload });

        const report = await sweep(sweeper({ rounds: 2 }).deps);

        expect(report).toMatchObject({ claimed: 4, sent: 3, failed: 1, errors: 0 });
        expect(sentIds().sort()).toEqual([id(1), id(2), id(3)]);
        expect(await message(id(4))).toMatchObject({
          status: MessageStatus.FAILED,
          lastError: expect.stringContaining('payload.'),
        });
        expect(await dueAt(new Date(FIXED_NOW.getTime() + 86_400_000))).not.toContain(id(4));
      },
    );

    it('fails a due message whose stored item cannot be read, and sweeps the rest of its page', async () => {
      for (const n of [1, 2])
        await putMessage({ messageId: id(n), nextAttemptAt: at(-1_000), dueShard: '0' });
      // An item written by another tool: no topic, attempts that are not a count.
      await db.send(
        new PutCommand({
          TableName: 'outbox',
          Item: {
            messageId: id(3),
            status: 'PENDING',
            attempts: 'two',
            dueShard: '0',
            nextAttemptAt: at(-1_000),
          },
        }),
      );

      const report = await sweep(sweeper({ settings: { dueShards: 1 } }).deps);

      expect(report).toMatchObject({ claimed: 3, sent: 2, failed: 1, errors: 0 });
      expect(sentIds().sort()).toEqual([id(1), id(2)]);
      expect(await message(id(3))).toMatchObject({
        status: MessageStatus.FAILED,
        lastError: expect.stringMatching(/^unreadable outbox item: .*topic/),
      });
      expect(await message(id(3))).not.toHaveProperty('leaseOwner');
    });

    it('sends a message stored without `attempts` as a first attempt, instead of failing it unsent', async () => {
      const { attempts: _attempts, ...bare } = outboxItem({ messageId: id(1), nextAttemptAt: at(-1_000) });
      await db.send(new PutCommand({ TableName: 'outbox', Item: bare }));

      const report = await sweep(sweeper().deps);

      expect(report).toMatchObject({ claimed: 1, sent: 1, failed: 0 });
      expect(sentIds()).toEqual([id(1)]);
      expect(await message(id(1))).toMatchObject({ status: MessageStatus.SENT, attempts: 1 });
    });

    it('records a failed send of a message stored without `attempts` as its first attempt', async () => {
      const { attempts: _attempts, ...bare } = outboxItem({ messageId: id(1), nextAttemptAt: at(-1_000) });
      await db.send(new PutCommand({ TableName: 'outbox', Item: bare }));

      await sweep(sweeper({ publisher: rejecting(queues, new Set([id(1)])) }).deps);

      expect(await message(id(1))).toMatchObject({
        status: MessageStatus.PENDING,
        attempts: 1,
        lastError: SEND_ERROR,
      });
    });
  });

  describe('errors', () => {
    it('counts a throwing claim and carries on; the message is swept in a later round', async () => {
      for (const n of [1, 2, 3]) await putMessage({ messageId: id(n), nextAttemptAt: at(-1_000) });
      const { deps, store } = sweeper({ rounds: 2 });
      store.failOnce('claim', id(2));

      const report = await sweep(deps);

      expect(report).toMatchObject({ rounds: 2, errors: 1, claimed: 3, sent: 3 });
      expect(sentIds().sort()).toEqual([id(1), id(2), id(3)]);
    });

    it('keeps sweeping the other shards when one shard cannot be read', async () => {
      const ids = Array.from({ length: 8 }, (_, n) => id(n + 1));
      for (const messageId of ids) await putMessage({ messageId, nextAttemptAt: at(-1_000) });
      const broken = dueShardOf(id(1));
      const { deps, store } = sweeper();
      store.failOnce('findDue', broken);

      const report = await sweep(deps);

      const expected = ids.filter((messageId) => dueShardOf(messageId) !== broken);
      expect(expected.length).toBeGreaterThan(0);
      expect(report.errors).toBe(1);
      expect(sentIds().sort()).toEqual(expected);
      expect(await message(id(1))).toMatchObject({ status: MessageStatus.PENDING });
    });

    it('sends nothing when its SENT mark cannot be written, and leaves the message to its lease', async () => {
      await putMessage({ messageId: id(1), nextAttemptAt: at(-1_000) });
      const first = sweeper();
      first.store.failOnce('markSent', id(1));

      const report = await sweep(first.deps);

      expect(report).toMatchObject({ claimed: 1, sent: 0, unrecorded: 1 });
      expect(sentIds()).toEqual([]);
      expect(await message(id(1))).toMatchObject({ status: MessageStatus.PENDING, leaseOwner: 'sweeper-a' });

      clock.advance(SETTINGS.leaseMs);
      const second = await sweep(sweeper({ owner: 'sweeper-b' }).deps);

      expect(second).toMatchObject({ claimed: 1, sent: 1 });
      expect(sentIds()).toEqual([id(1)]);
      expect(await message(id(1))).toMatchObject({ status: MessageStatus.SENT, attempts: 1 });
    });

    it('sends nothing when an operator cancelled the message after its claim: the mark under the claim fails', async () => {
      await putMessage({ messageId: id(1), nextAttemptAt: at(-1_000) });
      const { deps } = sweeper();
      // The cancel lands between the claim and the send (the mark is the sweeper's first write after its claim).
      const cancelled = interceptingMarks(deps, async () => {
        await db.send(
          new UpdateCommand({
            TableName: 'outbox',
            ...cancelUpdate({
              messageId: id(1),
              from: MessageStatus.PENDING,
              now: clock.now(),
              by: 'local:ana',
              reason: 'withdrawn',
            }),
          }),
        );
      });

      const report = await sweep(cancelled);

      expect(report).toMatchObject({ claimed: 1, sent: 0 });
      expect(sentIds()).toEqual([]);
      expect(await message(id(1))).toMatchObject({ status: MessageStatus.CANCELLED });
    });
  });

  describe('bounded work', () => {
    it('claims at most maxMessagesPerRun messages in a run', async () => {
      for (let n = 1; n <= 10; n += 1) await putMessage({ messageId: id(n), nextAttemptAt: at(-1_000) });

      const report = await sweep(sweeper({ rounds: 5, settings: { maxMessagesPerRun: 4 } }).deps);

      expect(report).toMatchObject({ rounds: 1, claimed: 4, sent: 4 });
      expect(sentIds()).toHaveLength(4);
    });

    it('spreads maxMessagesPerRun over rounds when pages are small', async () => {
      for (let n = 1; n <= 6; n += 1) {
        await putMessage({ messageId: id(n), dueShard: '0', nextAttemptAt: at(-1_000 * n) });
      }

      const report = await sweep(
        sweeper({ rounds: 10, settings: { pageSize: 2, maxMessagesPerRun: 5 } }).deps,
      );

      expect(report).toMatchObject({ rounds: 3, claimed: 5 });
      expect(sentIds()).toHaveLength(5);
    });

    it('takes the oldest due messages of a shard first', async () => {
      await putMessage({ messageId: id(1), dueShard: '0', nextAttemptAt: at(-1_000) });
      await putMessage({ messageId: id(2), dueShard: '0', nextAttemptAt: at(-3_000) });
      await putMessage({ messageId: id(3), dueShard: '0', nextAttemptAt: at(-2_000) });

      await sweep(sweeper({ settings: { pageSize: 2 } }).deps);

      expect(sentIds().sort()).toEqual([id(2), id(3)]);
    });

    it('starts no round when the remaining time is not above stopBeforeMs', async () => {
      await putMessage({ messageId: id(1), nextAttemptAt: at(-1_000) });

      const report = await sweep(sweeper({ remainingMs: () => SETTINGS.stopBeforeMs }).deps);

      expect(report.rounds).toBe(0);
      expect(sentIds()).toEqual([]);
    });

    it('stops starting rounds once the remaining time drops below stopBeforeMs', async () => {
      // A retry falls due later, but the clock stands still: the run keeps looking until its time is up.
      await putMessage({ messageId: id(1), nextAttemptAt: at(2_000) });
      const { deps, store } = sweeper({ settings: { stopBeforeMs: 5_000 } });
      const budgeted = { ...deps, remainingMs: () => 14_000 - store.rounds * 3_000 };

      const report = await sweep(budgeted);

      // 14 000, 11 000, 8 000 and 5 000 ms left at the checks: three rounds, then stop.
      expect(report.rounds).toBe(3);
    });

    it('ends at once, without waiting, when nothing is due and nothing falls due before the run would end', async () => {
      // Due after the run: the next scheduled run takes it.
      await putMessage({ messageId: id(1), nextAttemptAt: at(120_000) });
      const sleep = vi.fn(async (ms: number) => clock.advance(ms));
      const { deps } = sweeper({
        sleep,
        remainingMs: () => FIXED_NOW.getTime() + 60_000 - clock.now().getTime(),
      });

      const report = await sweep(deps);

      expect(report).toMatchObject({ rounds: 1, claimed: 0, ended: 'IDLE' });
      expect(sleep).not.toHaveBeenCalled();
    });

    it('waits between empty rounds while a message falls due within the run, never past the point where it must stop', async () => {
      // Time passes only while the sweeper sleeps; the run must stop with 5 s to spare.
      const deadline = FIXED_NOW.getTime() + 7_400;
      await putMessage({ messageId: id(1), nextAttemptAt: at(2_000) });
      const sleep = vi.fn(async (ms: number) => clock.advance(ms));
      const { deps } = sweeper({
        sleep,
        remainingMs: () => deadline - clock.now().getTime(),
        settings: { idleWaitMs: 1_000, stopBeforeMs: 5_000 },
      });

      const report = await sweep(deps);

      // Nothing due at 0 s and 1 s; the message at 2 s is sent; a fourth round finds nothing and nothing falls
      // due before the stop: ended.
      expect(report).toMatchObject({ rounds: 4, sent: 1, ended: 'IDLE' });
      expect(sentIds()).toEqual([id(1)]);
      expect(sleep.mock.calls.map(([ms]) => ms)).toEqual([1_000, 1_000]);
      expect(deadline - clock.now().getTime()).toBeGreaterThanOrEqual(5_000);
    });

    it('keeps draining a backlog while work remains, no faster than maxMessagesPerSecond', async () => {
      for (let n = 1; n <= 12; n += 1) await putMessage({ messageId: id(n), nextAttemptAt: at(-1_000) });
      const sleep = vi.fn(async (ms: number) => clock.advance(ms));
      const { deps } = sweeper({
        sleep,
        remainingMs: () => FIXED_NOW.getTime() + 60_000 - clock.now().getTime(),
        settings: { pageSize: 1, maxMessagesPerSecond: 2, dueShards: SETTINGS.dueShards },
      });

      const report = await sweep(deps);

      expect(report.sent).toBe(12);
      expect(sentIds()).toHaveLength(12);
      // Twelve messages at two a second take at least six seconds of the run.
      expect(clock.now().getTime() - FIXED_NOW.getTime()).toBeGreaterThanOrEqual(6_000);
      for (const [ms] of sleep.mock.calls) expect(ms).toBeGreaterThan(0);
    });
  });
});

/** Gives other pending work a chance to run first: a random number of turns of the event loop. */
async function randomPause(random: () => number): Promise<void> {
  for (let turns = Math.floor(random() * 4); turns > 0; turns -= 1) {
    await new Promise<void>((resolve) => setImmediate(resolve));
  }
}

/** The in-memory client with a random pause before each command, so concurrent callers interleave. */
function yielding(memory: MemoryDocumentClient, random: () => number): DynamoDBDocumentClient {
  const client = {
    send: async (command: unknown) => {
      await randomPause(random);
      return memory.send(command);
    },
  };
  return client as unknown as DynamoDBDocumentClient;
}

function yieldingPublisher(target: MemoryQueues, random: () => number): MessagePublisher {
  return {
    publishBatch: async (queueUrl, messages) => {
      await randomPause(random);
      return target.publishBatch(queueUrl, messages);
    },
  };
}

describe('sweep of ordered messages', () => {
  const ORDER_KEY = 'order#order-1';
  const GAP_TIMEOUT_MS = 300_000;
  const ordering = { orderingFor: () => ({ scope: 'order', gapTimeoutMs: GAP_TIMEOUT_MS }) };

  /** Message n, seq `seq` of the order key. */
  const inSequence = (n: number, seq: number, overrides: Partial<OutboxItem> = {}) =>
    putMessage({ messageId: id(n), orderKey: ORDER_KEY, seq, ...overrides });

  /** A SENT message whose confirmation deadline has passed: the sweeper reconciles it. */
  const overdueSent = {
    status: MessageStatus.SENT,
    attempts: 1,
    nextAttemptAt: at(-1_000),
    confirmBy: at(-1_000),
  };

  /** A SENT message still within its deadline (not due): the sweeper would not look at it on its own. */
  const freshlySent = {
    status: MessageStatus.SENT,
    attempts: 1,
    nextAttemptAt: at(200_000),
    confirmBy: at(200_000),
  };

  /** A delivery check that answers per message id (MISSING for the others), counting the questions. */
  function verdicts(byId: Readonly<Record<string, DeliveryVerdict>>) {
    return vi.fn(
      async (m: OutboxItem): Promise<DeliveryVerdict> => byId[m.messageId] ?? { verdict: 'MISSING' },
    );
  }

  it('holds seq 2 while seq 1 waits out its backoff, until seq 1 is due; then sends them in order', async () => {
    await inSequence(1, 1, { attempts: 1, nextAttemptAt: at(30_000), lastError: 'throttled' });
    await inSequence(2, 2, { nextAttemptAt: at(-1_000) });

    const held = await sweep(sweeper(ordering).deps);

    expect(held).toMatchObject({ claimed: 1, held: 1, sent: 0 });
    expect(sentIds()).toEqual([]);
    const waiting = await message(id(2));
    expect(waiting).toMatchObject({ status: MessageStatus.PENDING, attempts: 0, nextAttemptAt: at(30_000) });
    expect(waiting).not.toHaveProperty('leaseOwner');

    clock.advance(30_000);
    const released = await sweep(sweeper(ordering).deps);

    expect(released).toMatchObject({ sent: 2, held: 0 });
    expect(sentIds()).toEqual([id(1), id(2)]);
  });

  it('sends seq 1 and 2 in seq order when both are due, whichever the due index lists first', async () => {
    await inSequence(1, 2, { nextAttemptAt: at(-5_000) });
    await inSequence(2, 1, { nextAttemptAt: at(-1_000) });
    const { deps, store } = sweeper(ordering);
    const findInSequence = vi.spyOn(store, 'findInSequence');

    const report = await sweep(deps);

    expect(report).toMatchObject({ claimed: 2, sent: 2, held: 0 });
    expect(queues.peek(QUEUE).map(({ body }) => (JSON.parse(body) as Envelope).seq)).toEqual([1, 2]);
    expect(findInSequence).not.toHaveBeenCalled();
  });

  it('sends seq 2 at once when seq 1 was sent already', async () => {
    await inSequence(1, 1, freshlySent);
    await inSequence(2, 2, { nextAttemptAt: at(-1_000) });

    const report = await sweep(sweeper(ordering).deps);

    expect(report).toMatchObject({ sent: 1, held: 0 });
    expect(sentIds()).toEqual([id(2)]);
  });

  it('holds seq 2 behind a FAILED seq 1 for a gap timeout, and names seq 1 for an operator', async () => {
    await inSequence(1, 1, { status: MessageStatus.FAILED, attempts: 4 });
    await inSequence(2, 2, { nextAttemptAt: at(-1_000) });

    const report = await sweep(sweeper(ordering).deps);

    expect(sentIds()).toEqual([]);
    expect(await message(id(2))).toMatchObject({
      status: MessageStatus.PENDING,
      nextAttemptAt: at(GAP_TIMEOUT_MS),
    });
    expect(report.problems).toEqual([
      expect.objectContaining({
        messageId: id(2),
        orderKey: ORDER_KEY,
        seq: 2,
        outcome: 'HELD',
        error: expect.stringContaining(`seq 1 of ${ORDER_KEY} is FAILED`),
      }),
    ]);
  });

  it('leaves a message parked for less than the gap timeout until the timeout, without resending anything', async () => {
    await inSequence(1, 1, freshlySent);
    await inSequence(2, 2, overdueSent);
    const check = verdicts({ [id(2)]: { verdict: 'PARKED', parkedAt: at(-60_000), lastSeq: 0 } });

    const report = await sweep(sweeper({ ...ordering, deliveryCheckFor: () => check }).deps);

    expect(report).toMatchObject({ postponed: 1, requeued: 0, sent: 0, orderingGaps: {} });
    expect(sentIds()).toEqual([]);
    expect(await message(id(2))).toMatchObject({
      status: MessageStatus.SENT,
      nextAttemptAt: at(-60_000 + GAP_TIMEOUT_MS),
    });
    expect(check).toHaveBeenCalledTimes(1);
  });

  it('past the gap timeout counts a gap and resends the SENT predecessor the consumer never got, not the parked message', async () => {
    await inSequence(1, 1, freshlySent);
    await inSequence(2, 2, overdueSent);
    const check = verdicts({
      [id(2)]: { verdict: 'PARKED', parkedAt: at(-GAP_TIMEOUT_MS - 1_000), lastSeq: 0 },
    });

    const report = await sweep(sweeper({ ...ordering, deliveryCheckFor: () => check }).deps);

    expect(report).toMatchObject({ orderingGaps: { 'order.created': 1 }, requeued: 1, sent: 1 });
    expect(sentIds()).toEqual([id(1)]);
    expect(await message(id(1))).toMatchObject({ status: MessageStatus.SENT, resends: 1 });
    expect(await message(id(2))).toMatchObject({
      status: MessageStatus.SENT,
      nextAttemptAt: at(GAP_TIMEOUT_MS),
    });
    expect(await message(id(2))).not.toHaveProperty('resends');
  });

  it('past the gap timeout does not resend a predecessor the consumer holds too, nor one still PENDING', async () => {
    await inSequence(1, 1, { attempts: 1, nextAttemptAt: at(30_000) });
    await inSequence(2, 2, freshlySent);
    await inSequence(3, 3, overdueSent);
    const parkedAt = at(-GAP_TIMEOUT_MS - 1_000);
    const check = verdicts({
      [id(2)]: { verdict: 'PARKED', parkedAt, lastSeq: 0 },
      [id(3)]: { verdict: 'PARKED', parkedAt, lastSeq: 0 },
    });

    const report = await sweep(sweeper({ ...ordering, deliveryCheckFor: () => check }).deps);

    expect(report).toMatchObject({ orderingGaps: { 'order.created': 1 }, requeued: 0, sent: 0 });
    expect(sentIds()).toEqual([]);
    expect(await message(id(1))).toMatchObject({ status: MessageStatus.PENDING, nextAttemptAt: at(30_000) });
    // Given back to when it was due, for its own reconciliation.
    expect(await message(id(2))).toMatchObject({ status: MessageStatus.SENT, nextAttemptAt: at(200_000) });
    expect(await message(id(2))).not.toHaveProperty('leaseOwner');
  });

  it('resends on a FIFO queue within its 5-minute deduplication window: a new round is a new deduplication id', async () => {
    const fifo = 'memory://order-events.fifo';
    queues.createQueue(fifo, { visibilityTimeoutMs: 30_000, fifo: true });
    const sent = await inSequence(1, 1, overdueSent);
    // The first round's copy, accepted by SQS a minute ago and lost downstream since.
    await queues.publishBatch(fifo, [toEnvelope(sent)], { deliveryRounds: new Map([[sent.messageId, 0]]) });

    const report = await sweep(sweeper({ ...ordering, queueFor: () => fifo }).deps);

    expect(report).toMatchObject({ requeued: 1, sent: 1 });
    const copies = queues.receiveMessages(fifo, { max: 10 });
    expect(copies.map((copy) => [copy.groupId, copy.deduplicationId])).toEqual([
      [ORDER_KEY, `${id(1)}-0`],
      [ORDER_KEY, `${id(1)}-1`],
    ]);
  });

  it('past the gap timeout leaves alone a SENT predecessor another sweeper holds a claim on', async () => {
    await inSequence(1, 1, {
      ...freshlySent,
      leaseOwner: 'sweeper-b',
      leaseUntil: at(30_000),
      nextAttemptAt: at(30_000),
    });
    await inSequence(2, 2, overdueSent);
    const check = verdicts({
      [id(2)]: { verdict: 'PARKED', parkedAt: at(-GAP_TIMEOUT_MS - 1_000), lastSeq: 0 },
    });

    const report = await sweep(sweeper({ ...ordering, deliveryCheckFor: () => check }).deps);

    expect(report).toMatchObject({ orderingGaps: { 'order.created': 1 }, requeued: 0, sent: 0 });
    expect(sentIds()).toEqual([]);
    expect(await message(id(1))).toMatchObject({ status: MessageStatus.SENT, leaseOwner: 'sweeper-b' });
  });

  it('past the gap timeout resends a parked message whose predecessor was applied but that nothing drained', async () => {
    await inSequence(1, 1, { ...freshlySent, status: MessageStatus.CONFIRMED });
    await inSequence(2, 2, overdueSent);
    const check = verdicts({
      [id(2)]: { verdict: 'PARKED', parkedAt: at(-GAP_TIMEOUT_MS - 1_000), lastSeq: 1 },
    });

    const report = await sweep(sweeper({ ...ordering, deliveryCheckFor: () => check }).deps);

    expect(report).toMatchObject({ orderingGaps: { 'order.created': 1 }, requeued: 1, sent: 1 });
    expect(sentIds()).toEqual([id(2)]);
    expect(await message(id(2))).toMatchObject({ status: MessageStatus.SENT, resends: 1 });
  });

  it('past the gap timeout reports a FAILED predecessor for an operator to replay or skip, and resends nothing', async () => {
    await inSequence(1, 1, { status: MessageStatus.FAILED, attempts: 4, lastError: SEND_ERROR });
    await inSequence(2, 2, overdueSent);
    const check = verdicts({
      [id(2)]: { verdict: 'PARKED', parkedAt: at(-GAP_TIMEOUT_MS - 1_000), lastSeq: 0 },
    });

    const report = await sweep(sweeper({ ...ordering, deliveryCheckFor: () => check }).deps);

    expect(report).toMatchObject({ orderingGaps: { 'order.created': 1 }, requeued: 0, sent: 0 });
    expect(sentIds()).toEqual([]);
    expect(report.problems).toEqual([
      {
        messageId: id(1),
        topic: 'order.created',
        aggregateId: 'order-1',
        orderKey: ORDER_KEY,
        seq: 1,
        outcome: 'GAP',
        error: expect.stringMatching(/seq 1 of order#order-1 is FAILED .*replay or skip it/),
      },
    ]);
    expect(await message(id(1))).toMatchObject({ status: MessageStatus.FAILED });
    expect(await message(id(2))).toMatchObject({
      status: MessageStatus.SENT,
      nextAttemptAt: at(GAP_TIMEOUT_MS),
    });
  });

  it('past the gap timeout names a predecessor the outbox no longer holds (expired, erased), for a skip by seq', async () => {
    // Seq 1 was cancelled and its TTL removed it; seq 2 waits, parked, for it.
    await inSequence(2, 2, overdueSent);
    const check = verdicts({
      [id(2)]: { verdict: 'PARKED', parkedAt: at(-GAP_TIMEOUT_MS - 1_000), lastSeq: 0 },
    });

    const report = await sweep(sweeper({ ...ordering, deliveryCheckFor: () => check }).deps);

    expect(report).toMatchObject({ orderingGaps: { 'order.created': 1 }, requeued: 0, sent: 0 });
    expect(report.problems).toEqual([
      {
        messageId: id(2),
        topic: 'order.created',
        aggregateId: 'order-1',
        orderKey: ORDER_KEY,
        seq: 1,
        outcome: 'GAP',
        error: expect.stringContaining(
          `seq 1 of ${ORDER_KEY} is no longer in the outbox (expired after its cancel, or erased) and seq 2 (${id(2)}) waits for it: skip it (outbox skip --order-key ${ORDER_KEY} --seq 1)`,
        ),
      },
    ]);
  });
});

describe('inboxDeliveryCheck', () => {
  const message = outboxItem({ messageId: id(8) });

  /** The in-memory client, recording every command it is sent. */
  function recording(): { client: DynamoDBDocumentClient; commands: unknown[] } {
    const commands: unknown[] = [];
    const client = {
      send: async (command: unknown) => {
        commands.push(command);
        return db.send(command);
      },
    };
    return { client: client as unknown as DynamoDBDocumentClient, commands };
  }

  it('reports DELIVERED with the recorded outcome when the consumer’s inbox holds the message id, MISSING otherwise', async () => {
    const check = inboxDeliveryCheck(db.asDocumentClient(), 'inbox');

    await expect(check(message)).resolves.toEqual({ verdict: 'MISSING' });
    await db.send(
      new PutCommand({
        TableName: 'inbox',
        Item: { messageId: message.messageId, outcome: 'REJECTED_OUT_OF_STOCK' },
      }),
    );
    await expect(check(message)).resolves.toEqual({ verdict: 'DELIVERED', outcome: 'REJECTED_OUT_OF_STOCK' });
  });

  it('reads the inbox row strongly consistently, so a just-committed effect is never taken for missing', async () => {
    const { client, commands } = recording();

    await inboxDeliveryCheck(client, 'inbox')(message);

    expect(commands).toHaveLength(1);
    expect(commands[0]).toBeInstanceOf(GetCommand);
    expect((commands[0] as GetCommand).input).toMatchObject({
      TableName: 'inbox',
      Key: { messageId: message.messageId },
      ConsistentRead: true,
    });
  });

  it('lets a read failure escape, so the sweeper asks again later instead of resending', async () => {
    const failing = {
      send: async () => {
        throw new Error('ProvisionedThroughputExceededException');
      },
    } as unknown as DynamoDBDocumentClient;

    await expect(inboxDeliveryCheck(failing, 'inbox')(message)).rejects.toThrow(
      'ProvisionedThroughputExceededException',
    );
  });
});
