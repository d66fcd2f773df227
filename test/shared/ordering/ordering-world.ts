import { type DynamoDBDocumentClient, GetCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { seededRandom } from '../../../infra/dev/drill/faults.ts';
import type { AdminDeps } from '../../../shared/admin/admin-deps.ts';
import { AdminError } from '../../../shared/admin/admin-errors.ts';
import type { AdminQueues } from '../../../shared/admin/admin-queues.ts';
import { bulkReplay } from '../../../shared/admin/bulk-replay.ts';
import { eraseAggregate } from '../../../shared/admin/erase-aggregate.ts';
import { cancelMessage, replayMessage } from '../../../shared/admin/message-actions.ts';
import { skipOrderGap } from '../../../shared/admin/skip-order-gap.ts';
import { AUDIT_KEYS } from '../../../shared/aws/audit-table.ts';
import { type DynamoAdminDepsOptions, dynamoAdminDeps } from '../../../shared/aws/dynamo-admin-deps.ts';
import { cursorKeyOf, inboxDeliveryCheck } from '../../../shared/aws/inbox-table.ts';
import { DynamoOutboxStore } from '../../../shared/aws/outbox-table/dynamo-outbox-store.ts';
import { OUTBOX_KEYS } from '../../../shared/aws/outbox-table.ts';
import { writeWithOutbox } from '../../../shared/aws/outbox-writer.ts';
import type { PlanEffect } from '../../../shared/consumer/consume-message.ts';
import { consumeSqsEvent } from '../../../shared/lambda/consumer-handler.ts';
import { type ConsumeDeps, consumeMessage } from '../../../shared/lambda/inbox-consumer.ts';
import { relayStreamEvent } from '../../../shared/lambda/relay-stream-batch.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { createMessage, type Envelope, parseEnvelope } from '../../../shared/message/envelope.ts';
import { type OrderingByTopic, orderKeyOf } from '../../../shared/ordering/ordering.ts';
import type { SweepStore } from '../../../shared/outbox/outbox-store.ts';
import type { OutboxWrite } from '../../../shared/outbox/outbox-write.ts';
import type { MessagePublisher, PublishResult } from '../../../shared/relay/message-publisher.ts';
import type { RelayDeps } from '../../../shared/relay/relay-messages.ts';
import { messageBody } from '../../../shared/relay/wire-format.ts';
import type { RetryPolicy } from '../../../shared/retry/retry-policy.ts';
import { DEFAULT_SWEEPER_SETTINGS, type SweepReport, sweep } from '../../../shared/sweeper/sweep.ts';
import type { TransactWriteAction } from '../../../shared/transaction/transaction-limits.ts';
import {
  lambdaContext,
  type ManualClock,
  MEMORY_TABLE_SCHEMAS,
  manualClock,
  sqsRecord,
  streamRecord,
  testMessageId,
} from '../../support/factories.ts';

/** The queue every topic of the world goes to. */
export const QUEUE = 'memory://orders';
/** Ordered topics of aggregates numbered by their version, sharing the scope `order`. */
export const ORDERED_TOPICS = ['order.created', 'order.cancelled'] as const;
/** Ordered topics of aggregates numbered from the sequence table's counter, sharing the scope `cart`. */
export const COUNTED_TOPICS = ['cart.updated', 'cart.closed'] as const;
/** A topic without ordering. */
export const UNORDERED_TOPIC = 'note.added';
/** Every topic of the world. */
export const WORLD_TOPICS: readonly string[] = [...ORDERED_TOPICS, ...COUNTED_TOPICS, UNORDERED_TOPIC];
/** How long a consumer may hold a message before the sweeper treats it as a gap, unless a run says otherwise. */
export const GAP_TIMEOUT_MS = 30_000;
/** How long a SENT message may go unconfirmed before the sweeper asks the consumer's inbox. */
export const CONFIRM_DEADLINE_MS = 60_000;
/** How long a new message waits for the stream before the sweeper may send it. */
export const STREAM_GRACE_MS = 10_000;
/**
 * Retries back off within seconds; attempts are plentiful, so no random outage can exhaust them (a FAILED message
 * waits for an operator, which this world does not model).
 */
export const POLICY: RetryPolicy = {
  baseDelayMs: 1_000,
  multiplier: 2,
  maxDelayMs: 20_000,
  maxAttempts: 1_000,
};

/**
 * Two scopes, one per way of numbering (one scope has one seq source): `order` from the aggregate's version,
 * `cart` from the counter row; the fifth topic is unordered.
 */
function orderingWith(gapTimeoutMs: number): OrderingByTopic {
  const versioned = { scope: 'order', gapTimeoutMs, sequence: 'aggregate-version' } as const;
  const counted = { scope: 'cart', gapTimeoutMs, sequence: 'counter' } as const;
  return {
    'order.created': versioned,
    'order.cancelled': versioned,
    'cart.updated': counted,
    'cart.closed': counted,
    [UNORDERED_TOPIC]: 'none',
  };
}

/** How an aggregate's messages are numbered (ordered) or that they are not (unordered). */
export type AggregateMode = 'counter' | 'version' | 'unordered';

/** One aggregate of a run: how many messages it gets, and how they are numbered. */
export interface AggregatePlan {
  readonly messages: number;
  readonly mode: AggregateMode;
}

/** A step of the random phase. */
export type Step =
  /** The next `count` messages of an aggregate, in one write. */
  | { readonly kind: 'write'; readonly aggregate: number; readonly count: number }
  /** Two writers at once, one message each, on an aggregate numbered from the counter row. */
  | { readonly kind: 'race'; readonly aggregate: number }
  /** The relay gets the buffered stream records at these positions, in this order (repeats are duplicates). */
  | { readonly kind: 'stream'; readonly picks: readonly number[] }
  /** A stream record is lost (the sweeper must send its message after the grace). */
  | { readonly kind: 'loseStream'; readonly pick: number }
  /** After `healthy` more calls, the relay's and sweeper's next `failing` outbox store calls fail. */
  | { readonly kind: 'storeOutage'; readonly healthy: number; readonly failing: number }
  /** SQS rejects the next `entries` entries offered to it. */
  | { readonly kind: 'outage'; readonly entries: number }
  /**
   * The next `entries` entries reach the queue but their answer is lost (a timed-out call): the sender takes them
   * for failed and sends them again later, so a copy is on its way while the message is PENDING.
   */
  | { readonly kind: 'lostAnswer'; readonly entries: number }
  /** Time passes, then a sweeper run of one or two rounds. */
  | { readonly kind: 'sweep'; readonly advanceMs: number; readonly rounds: number }
  /** Time passes. */
  | { readonly kind: 'tick'; readonly advanceMs: number }
  /**
   * The consumer receives the copy at `pick`: `ack` consumes and deletes it; `crash` fails at DynamoDB call
   * `crashAt` (or just before the delete when it makes fewer calls), so the copy is received again; `deadLetter`
   * moves it to the DLQ unconsumed (its receives ran out); `lose` loses it (retention, a purge).
   */
  | {
      readonly kind: 'deliver';
      readonly pick: number;
      readonly fate: 'ack' | 'crash' | 'deadLetter' | 'lose';
      readonly crashAt: number;
    }
  /** An operator moves every dead letter back to the queue. */
  | { readonly kind: 'redrive' }
  /**
   * The consumer function receives an SQS batch of the copies at `picks` (removed from the queue in that order;
   * repeats pick further copies): records of one aggregate one after another, the others concurrently. The
   * records it reports as failed (or all of them, when it throws) are received again. With `fifo`, the records
   * carry their message group (the order key, else the aggregate id), as a FIFO queue's do.
   */
  | { readonly kind: 'batch'; readonly picks: readonly number[]; readonly fifo: boolean }
  /**
   * At the same time: two consumer instances each receive a copy (at `picks`), and `sweeps` sweeper runs of one
   * round run, and optionally the relay gets the whole stream buffer.
   */
  | {
      readonly kind: 'together';
      readonly picks: readonly [number, number];
      readonly sweeps: number;
      readonly stream: boolean;
    }
  /** An operator acts (through the admin core, as the CLI and the admin API do). */
  | { readonly kind: 'operator'; readonly action: OperatorAction }
  /**
   * An operator acts in the middle of something else: just before DynamoDB call `at` of a sweeper run, a
   * consumer's delivery of the copy at `pick`, a relay batch of the whole stream buffer, or another operator
   * action (`first`).
   */
  | {
      readonly kind: 'interleave';
      readonly during: 'sweep' | 'deliver' | 'stream' | 'operator';
      readonly at: number;
      readonly pick: number;
      readonly first: OperatorAction;
      readonly action: OperatorAction;
    };

/**
 * What an operator does; `pick` chooses among the messages (or aggregates) the action applies to at that moment,
 * in id order.
 */
export type OperatorAction =
  /** Replays a FAILED or CANCELLED message. */
  | { readonly op: 'replay'; readonly pick: number }
  /** Replays every FAILED (and, with `includeCancelled`, CANCELLED) message of one topic. */
  | { readonly op: 'bulkReplay'; readonly topic: number; readonly includeCancelled: boolean }
  /** Cancels a PENDING or FAILED message. */
  | { readonly op: 'cancel'; readonly pick: number }
  /** Erases one aggregate (refused while one of its messages is PENDING or SENT). */
  | { readonly op: 'erase'; readonly pick: number }
  /** Skips an ordered message (by its order key and seq) that is PENDING, FAILED or CANCELLED. */
  | { readonly op: 'skip'; readonly pick: number }
  /** `outbox recover` for every topic: the FAILED messages replayed, the dead letters redriven. */
  | { readonly op: 'recover' };

/** A copy of a message in the SQS model. */
interface Copy {
  readonly message: Envelope;
}

/** A consumer crash: the DynamoDB call after `left` more calls throws. */
class Crash extends Error {}

/** What a run ends with, for the assertions. */
export interface WorldOutcome {
  /** Per aggregate id, what the effect recorded in commit order: seqs (ordered) or message ids (unordered). */
  readonly applied: ReadonlyMap<string, readonly (number | string)[]>;
  /** Per aggregate id, the ids of the messages written, in write order. */
  readonly written: ReadonlyMap<string, readonly string[]>;
  /** Every outbox row, as stored. */
  readonly outbox: readonly Record<string, unknown>[];
  /** Every row of the consumer's inbox table: inbox rows, cursors, parked rows. */
  readonly inbox: readonly Record<string, unknown>[];
  /** Whether the pipeline settled (everything confirmed, nothing in flight) within the bound. */
  readonly quiescent: boolean;
  readonly sweepProblems: readonly string[];
  /** How often each path of interest ran (parked, drained, gaps, holds, crashes, resends…). */
  readonly paths: Readonly<Record<string, number>>;
  /** Ids of the messages an operator's erase deleted. */
  readonly erased: ReadonlySet<string>;
  /** Promises broken on the way, as they happened (a message handed to SQS while CANCELLED, say). */
  readonly violations: readonly string[];
}

/** Every fifth message (the third, the eighth…) is one the consumer declines: its effect's condition fails. */
export const REJECTED = 'REJECTED';

/** Whether message number `n` of a run is declined by the consumer. */
function declined(n: number): boolean {
  return n % 5 === 3;
}

/**
 * The effect of every message: its seq (ordered) or id (unordered) appended to its aggregate's list, committed
 * with the inbox row and the cursor. A declined message's effect also checks an item that never exists, so it is
 * recorded as REJECTED and appends nothing.
 */
const planEffect: PlanEffect = (message) => {
  const append: TransactWriteAction = {
    Update: {
      TableName: 'effects',
      Key: { aggregateId: message.aggregateId },
      UpdateExpression: 'SET #applied = list_append(if_not_exists(#applied, :empty), :entry)',
      ExpressionAttributeNames: { '#applied': 'applied' },
      ExpressionAttributeValues: { ':empty': [], ':entry': [message.seq ?? message.messageId] },
    },
  };
  const never: TransactWriteAction = {
    ConditionCheck: {
      TableName: 'orders',
      Key: { orderId: 'never-written' },
      ConditionExpression: 'attribute_exists(#orderId)',
      ExpressionAttributeNames: { '#orderId': 'orderId' },
    },
  };
  const payload = message.payload as { readonly declined?: boolean };
  return { apply: payload.declined === true ? [append, never] : [append], onConditionFailure: REJECTED };
};

/**
 * The whole outbox pipeline of one run over the in-memory table, with the library's real cores at every step (the
 * writer in both numbering modes, the stream relay, the sweeper with the inbox delivery check, the consumer with
 * its cursor and parked rows, alone or through the SQS batch core), and a transport the test drives step by step:
 * stream records delivered in any order, twice, or lost; SQS copies received in any order, redelivered,
 * dead-lettered and redriven, or lost; SQS entries rejected and outbox store calls failing on demand; a consumer
 * that crashes at any DynamoDB call. Time is a manual clock.
 */
export class OrderingWorld {
  readonly clock: ManualClock = manualClock();
  readonly db = new MemoryDocumentClient(
    {
      ...MEMORY_TABLE_SCHEMAS,
      outbox: {
        ...MEMORY_TABLE_SCHEMAS.outbox,
        globalIndexes: [
          ...MEMORY_TABLE_SCHEMAS.outbox.globalIndexes,
          {
            name: OUTBOX_KEYS.attentionIndex.name,
            partitionKey: OUTBOX_KEYS.attentionIndex.partitionKey,
            sortKey: OUTBOX_KEYS.attentionIndex.sortKey,
          },
        ],
      },
      audit: { partitionKey: AUDIT_KEYS.partitionKey, sortKey: AUDIT_KEYS.sortKey },
      effects: { partitionKey: 'aggregateId' },
    },
    { clock: this.clock.now },
  );
  readonly #plans: readonly AggregatePlan[];
  readonly #random: () => number;
  readonly #written = new Map<string, string[]>();
  readonly #versions = new Map<string, number>();
  #stream: DynamoDBRecord[] = [];
  #streamSequence = 0;
  #queue: Copy[] = [];
  #deadLetters: Copy[] = [];
  #rejectEntries = 0;
  #loseAnswers = 0;
  /** Relay and sweeper store calls: after `healthy` more succeed, the next `failing` fail. */
  readonly #storeOutage = { healthy: 0, failing: 0 };
  #messageCount = 0;
  /** SQS receives so far, for the records' SQS message ids. */
  #receives = 0;
  #sweeps = 0;
  /** DynamoDB calls the consumer may still make before it crashes; undefined: no crash armed. */
  #crashAfter: number | undefined;
  readonly #problems: string[] = [];
  readonly #paths: Record<string, number> = {};
  readonly #erased = new Set<string>();
  readonly #violations: string[] = [];
  /** Audit row ids, time-ordered. */
  #actions = 0;

  readonly #ordering: OrderingByTopic;
  readonly #gapTimeoutMs: number;

  constructor(
    plans: readonly AggregatePlan[],
    options: { readonly seed: number; readonly gapTimeoutMs?: number },
  ) {
    const { seed, gapTimeoutMs = GAP_TIMEOUT_MS } = options;
    this.#plans = plans;
    this.#gapTimeoutMs = gapTimeoutMs;
    this.#ordering = orderingWith(gapTimeoutMs);
    this.#random = seededRandom(seed);
    this.db.onChange((change) => {
      if (change.tableName !== 'outbox' || change.eventName !== 'INSERT' || change.newImage === undefined)
        return;
      this.#streamSequence += 1;
      this.#stream.push(
        streamRecord(change.newImage, { sequenceNumber: String(100_000 + this.#streamSequence) }),
      );
    });
  }

  /** The id of aggregate `index`. */
  static aggregateId(index: number): string {
    return `agg-${index}`;
  }

  /** Runs one step of the random phase; a step that does not apply (nothing left to write, say) does nothing. */
  async step(step: Step): Promise<void> {
    switch (step.kind) {
      case 'write':
        return this.#write(step.aggregate, step.count);
      case 'race':
        return this.#race(step.aggregate);
      case 'stream':
        return this.#relay(step.picks);
      case 'loseStream':
        if (this.#stream.length > 0) this.#stream.splice(step.pick % this.#stream.length, 1);
        return;
      case 'storeOutage':
        this.#storeOutage.healthy = step.healthy;
        this.#storeOutage.failing = step.failing;
        return;
      case 'outage':
        this.#rejectEntries += step.entries;
        return;
      case 'lostAnswer':
        this.#loseAnswers += step.entries;
        return;
      case 'sweep':
        this.clock.advance(step.advanceMs);
        await this.#sweep(step.rounds);
        return;
      case 'tick':
        this.clock.advance(step.advanceMs);
        return;
      case 'deliver':
        return this.#deliver(step);
      case 'together':
        await Promise.all([
          ...step.picks.map((pick) => this.#deliver({ kind: 'deliver', pick, fate: 'ack', crashAt: 0 })),
          ...Array.from({ length: step.sweeps }, () => this.#sweep(1)),
          step.stream ? this.#relay(this.#stream.map((_, position) => position)) : undefined,
        ]);
        return;
      case 'batch':
        return this.#deliverBatch(step);
      case 'redrive':
        this.#queue.push(...this.#deadLetters);
        this.#deadLetters = [];
        return;
      case 'operator':
        return this.#operate(step.action, this.db.asDocumentClient());
      case 'interleave':
        return this.#interleave(step);
    }
  }

  /**
   * Writes what the random phase did not, then lets the pipeline run without faults until everything is
   * confirmed and nothing is in flight (a bounded number of rounds), and returns what it ended with.
   */
  async settle(): Promise<WorldOutcome> {
    for (const index of this.#plans.keys()) {
      while (this.#remaining(index) > 0) await this.#write(index, 1);
    }
    this.#rejectEntries = 0;
    this.#loseAnswers = 0;
    this.#storeOutage.failing = 0;
    let quiescent = false;
    for (let round = 0; round < 30 && !quiescent; round += 1) {
      await this.#relay(this.#stream.map((_, position) => position));
      for (let receives = 0; this.#queue.length > 0 && receives < 200; receives += 1) {
        await this.#deliver({ kind: 'deliver', pick: 0, fate: 'ack', crashAt: 0 });
      }
      this.#queue.push(...this.#deadLetters);
      this.#deadLetters = [];
      const outbox = await this.#rows('outbox');
      quiescent =
        this.#queue.length === 0 &&
        this.#stream.length === 0 &&
        outbox.every((row) => row.status === 'CONFIRMED' || row.status === 'CANCELLED') &&
        !(await this.#gapLeft());
      if (quiescent) break;
      // What an operator does at the end of an incident: skip a gap that only they can close.
      await this.#closeGaps();
      this.clock.advance(Math.max(this.#gapTimeoutMs, CONFIRM_DEADLINE_MS, POLICY.maxDelayMs) + 1_000);
      await this.#sweep(3);
    }
    const applied = new Map<string, readonly (number | string)[]>();
    for (const aggregateId of this.#written.keys()) {
      const row = await this.db.send(new GetCommand({ TableName: 'effects', Key: { aggregateId } }));
      const item = row.Item as { readonly applied?: readonly (number | string)[] } | undefined;
      applied.set(aggregateId, item?.applied ?? []);
    }
    const inbox = await this.#rows('inbox');
    // A parked row whose message another copy applied is left to expire; how many there are, for the record.
    this.#count(
      'parked rows left',
      inbox.filter((row) => String(row.messageId).startsWith('parked#')).length,
    );
    return {
      applied,
      written: this.#written,
      outbox: await this.#rows('outbox'),
      inbox,
      quiescent,
      sweepProblems: this.#problems,
      paths: this.#paths,
      erased: this.#erased,
      violations: this.#violations,
    };
  }

  #count(path: string, times = 1): void {
    if (times > 0) this.#paths[path] = (this.#paths[path] ?? 0) + times;
  }

  #remaining(index: number): number {
    const plan = this.#plans[index];
    if (plan === undefined) return 0;
    return plan.messages - (this.#written.get(OrderingWorld.aggregateId(index))?.length ?? 0);
  }

  #newMessages(index: number, count: number): Envelope[] {
    const aggregateId = OrderingWorld.aggregateId(index);
    const mode = this.#plans[index]?.mode;
    return Array.from({ length: count }, () => {
      this.#messageCount += 1;
      const topics = mode === 'counter' ? COUNTED_TOPICS : ORDERED_TOPICS;
      const topic = mode === 'unordered' ? UNORDERED_TOPIC : topics[this.#messageCount % topics.length];
      return createMessage(
        {
          topic: topic ?? UNORDERED_TOPIC,
          aggregateId,
          payload: { n: this.#messageCount, declined: declined(this.#messageCount) },
          messageId: testMessageId(this.#messageCount),
        },
        this.clock.now(),
      );
    });
  }

  #writer() {
    return {
      client: this.db.asDocumentClient(),
      outboxTable: 'outbox',
      streamGraceMs: STREAM_GRACE_MS,
      ordering: this.#ordering,
      sequenceTable: 'sequences',
      clock: this.clock.now,
    };
  }

  async #write(index: number, wanted: number): Promise<void> {
    const count = Math.min(wanted, this.#remaining(index));
    if (count <= 0) return;
    const aggregateId = OrderingWorld.aggregateId(index);
    const messages = this.#newMessages(index, count);
    const write: OutboxWrite =
      this.#plans[index]?.mode === 'version'
        ? this.#versioned(aggregateId, messages)
        : { actions: [], messages };
    await writeWithOutbox(this.#writer(), write);
    if (write.aggregateVersions !== undefined) {
      this.#versions.set(aggregateId, write.aggregateVersions[aggregateId] ?? 0);
    }
    this.#recordWritten(aggregateId, messages);
  }

  /** A write that moves the aggregate's version under a condition, as a business action does. */
  #versioned(aggregateId: string, messages: readonly Envelope[]): OutboxWrite {
    const previous = this.#versions.get(aggregateId) ?? 0;
    const version = previous + messages.length;
    const action: TransactWriteAction = {
      Update: {
        TableName: 'orders',
        Key: { orderId: aggregateId },
        UpdateExpression: 'SET #version = :version',
        ConditionExpression: previous === 0 ? 'attribute_not_exists(#orderId)' : '#version = :previous',
        ExpressionAttributeNames: {
          '#version': 'version',
          ...(previous === 0 ? { '#orderId': 'orderId' } : {}),
        },
        ExpressionAttributeValues: {
          ':version': version,
          ...(previous === 0 ? {} : { ':previous': previous }),
        },
      },
    };
    return { actions: [action], messages, aggregateVersions: { [aggregateId]: version } };
  }

  #recordWritten(aggregateId: string, messages: readonly Envelope[]): void {
    const ids = this.#written.get(aggregateId) ?? [];
    ids.push(...messages.map((m) => m.messageId));
    this.#written.set(aggregateId, ids);
  }

  async #race(index: number): Promise<void> {
    if (this.#plans[index]?.mode !== 'counter' || this.#remaining(index) < 2) return this.#write(index, 1);
    const aggregateId = OrderingWorld.aggregateId(index);
    const [first, second] = [this.#newMessages(index, 1), this.#newMessages(index, 1)];
    await Promise.all(
      [first, second].map(async (messages) => {
        await writeWithOutbox(this.#writer(), { actions: [], messages });
        this.#recordWritten(aggregateId, messages);
      }),
    );
  }

  #publisher(): MessagePublisher {
    return {
      publishBatch: async (_queueUrl, messages): Promise<PublishResult> => {
        const sent: string[] = [];
        const failed: { messageId: string; error: string }[] = [];
        for (const message of messages) {
          if (this.#rejectEntries > 0) {
            this.#rejectEntries -= 1;
            failed.push({ messageId: message.messageId, error: 'InternalError: injected' });
            continue;
          }
          // A cancelled message must never be handed to SQS: its cancel was meant to stop exactly that.
          const stored = await this.db.send(
            new GetCommand({ TableName: 'outbox', Key: { messageId: message.messageId } }),
          );
          if ((stored.Item as { readonly status?: string } | undefined)?.status === 'CANCELLED') {
            this.#violations.push(`${message.messageId} was handed to SQS while CANCELLED`);
          }
          this.#count('published');
          // What the consumer reads back: the body as the relay writes it to SQS.
          this.#queue.push({ message: parseEnvelope(JSON.parse(messageBody(message))) });
          if (this.#loseAnswers > 0) {
            this.#loseAnswers -= 1;
            this.#count('answer lost');
            failed.push({
              messageId: message.messageId,
              error: 'TimeoutError: injected (the entry was queued)',
            });
            continue;
          }
          sent.push(message.messageId);
        }
        return { sent, failed };
      },
    };
  }

  #relayDeps(store: SweepStore): RelayDeps {
    return {
      publisher: this.#publisher(),
      store,
      queueFor: (topic) => (WORLD_TOPICS.includes(topic) ? QUEUE : undefined),
      retryPolicyFor: () => POLICY,
      clock: this.clock.now,
      random: this.#random,
    };
  }

  #store(client: DynamoDBDocumentClient = this.db.asDocumentClient()): DynamoOutboxStore {
    return new DynamoOutboxStore({ client, tableName: 'outbox', confirmDeadlineMs: CONFIRM_DEADLINE_MS });
  }

  async #relay(
    picks: readonly number[],
    client: DynamoDBDocumentClient = this.db.asDocumentClient(),
  ): Promise<void> {
    if (this.#stream.length === 0 || picks.length === 0) return;
    const buffered = this.#stream;
    const records = picks.map((pick) => buffered[pick % buffered.length] as DynamoDBRecord);
    const taken = new Set(records);
    this.#stream = buffered.filter((record) => !taken.has(record));
    const silent = { info: () => undefined, warn: () => undefined };
    const { response, report } = await relayStreamEvent(
      { Records: records },
      this.#relayDeps(this.#faultyStore(() => undefined, client)),
      silent,
    );
    this.#count('relay held', report.held);
    this.#count('relay retry scheduled', report.retryScheduled);
    // Lambda retries a batch from its first failed record: those records come back.
    const failedIds = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
    this.#stream.push(...[...taken].filter((record) => failedIds.has(record.dynamodb?.SequenceNumber ?? '')));
  }

  /**
   * The outbox store of a relay or sweeper run, failing the calls an armed store outage names (throttling, an
   * unreachable DynamoDB); `onFindDue` sees each due-index read.
   */
  #faultyStore(
    onFindDue: (shard: string, limit: number) => void = () => undefined,
    client: DynamoDBDocumentClient = this.db.asDocumentClient(),
  ): DynamoOutboxStore {
    return new Proxy(this.#store(client), {
      get: (target, property, receiver) => {
        const value: unknown = Reflect.get(target, property, receiver);
        if (typeof value !== 'function') return value;
        return (...args: unknown[]) => {
          if (property === 'findDue') onFindDue(String(args[0]), Number(args[2]));
          const outage = this.#storeOutage;
          if (outage.failing > 0) {
            if (outage.healthy > 0) outage.healthy -= 1;
            else {
              outage.failing -= 1;
              this.#count('store call failed');
              return Promise.reject(new Error('ProvisionedThroughputExceededException: injected'));
            }
          }
          return (value as (...values: unknown[]) => unknown).apply(target, args);
        };
      },
    });
  }

  async #sweep(
    rounds: number,
    client: DynamoDBDocumentClient = this.db.asDocumentClient(),
  ): Promise<SweepReport> {
    let started = 0;
    // Counts rounds (each reads a page of shard 0; the look-ahead reads one entry), to bound the run.
    const store = this.#faultyStore((shard, limit) => {
      if (shard === '0' && limit !== 1) started += 1;
    }, client);
    this.#sweeps += 1;
    const report = await sweep({
      ...this.#relayDeps(store),
      store,
      owner: `sweeper-${this.#sweeps}`,
      deliveryCheckFor: () => inboxDeliveryCheck(this.db.asDocumentClient(), 'inbox'),
      remainingMs: () => (started < rounds ? 60_000 : 0),
      sleep: async () => undefined,
      settings: { ...DEFAULT_SWEEPER_SETTINGS, recheckAfterMs: 10_000 },
      orderingFor: (topic) => {
        const ordering = this.#ordering[topic];
        return ordering === undefined || ordering === 'none' ? undefined : ordering;
      },
    });
    this.#count('sweep sent', report.sent);
    this.#count('sweep held', report.held);
    this.#count('sweep requeued', report.requeued);
    this.#count('sweep confirmed', report.reconciledConfirmed);
    this.#count(
      'ordering gaps',
      Object.values(report.orderingGaps).reduce((sum, n) => sum + n, 0),
    );
    this.#problems.push(...report.problems.map((p) => `${p.outcome} ${p.messageId}: ${p.error}`));
    return report;
  }

  /** The consumer's DynamoDB: the in-memory one, failing at the call an armed crash names. */
  #consumerClient(inner: DynamoDBDocumentClient = this.db.asDocumentClient()): ConsumeDeps['client'] {
    return {
      send: (command: Parameters<MemoryDocumentClient['send']>[0]) => {
        if (this.#crashAfter !== undefined) {
          if (this.#crashAfter <= 0) return Promise.reject(new Crash('consumer crashed'));
          this.#crashAfter -= 1;
        }
        return inner.send(command as never);
      },
    } as unknown as ConsumeDeps['client'];
  }

  async #deliver(
    step: Extract<Step, { kind: 'deliver' }>,
    inner: DynamoDBDocumentClient = this.db.asDocumentClient(),
  ): Promise<void> {
    if (this.#queue.length === 0) return;
    const position = step.pick % this.#queue.length;
    const [copy] = this.#queue.splice(position, 1);
    if (copy === undefined) return;
    if (step.fate === 'lose') return;
    if (step.fate === 'deadLetter') {
      this.#deadLetters.push(copy);
      return;
    }
    const client = this.#consumerClient(inner);
    const deps: ConsumeDeps = {
      client,
      inboxTable: 'inbox',
      confirmer: new DynamoOutboxStore({
        client,
        tableName: 'outbox',
        confirmDeadlineMs: CONFIRM_DEADLINE_MS,
      }),
      clock: this.clock.now,
      sleep: async () => undefined,
      random: this.#random,
    };
    this.#crashAfter = step.fate === 'crash' ? step.crashAt : undefined;
    try {
      const result = await consumeMessage(copy.message, planEffect, deps);
      this.#count(`consumed ${result.kind}`);
      if (result.confirmation === 'APPLIED_AFTER_CANCEL') this.#count('applied after cancel');
      this.#count('drained', result.drained?.length ?? 0);
      // A crash (at a call whose failure the drain caught, or after the last call): the function stopped there,
      // the copy is never deleted, and SQS delivers it again.
      this.#count('drain failed', result.drainFailure === undefined ? 0 : 1);
      if (step.fate === 'crash') {
        this.#count('consumer crashed after its calls');
        this.#queue.push(copy);
      }
      // The consumer function requeues a parked successor whose apply failed as a copy of its own.
      else if (result.drainFailure !== undefined) this.#queue.push({ message: result.drainFailure.message });
    } catch (error) {
      if (!(error instanceof Crash)) throw error;
      this.#count('consumer crashed');
      this.#queue.push(copy);
    } finally {
      this.#crashAfter = undefined;
    }
  }

  #consumeDeps(): ConsumeDeps {
    const client = this.#consumerClient();
    return {
      client,
      inboxTable: 'inbox',
      confirmer: new DynamoOutboxStore({
        client,
        tableName: 'outbox',
        confirmDeadlineMs: CONFIRM_DEADLINE_MS,
      }),
      clock: this.clock.now,
      sleep: async () => undefined,
      random: this.#random,
    };
  }

  async #deliverBatch(step: Extract<Step, { kind: 'batch' }>): Promise<void> {
    const copies: Copy[] = [];
    for (const pick of step.picks) {
      if (this.#queue.length === 0) break;
      const [copy] = this.#queue.splice(pick % this.#queue.length, 1);
      if (copy !== undefined) copies.push(copy);
    }
    if (copies.length === 0) return;
    const records = copies.map((copy) => {
      this.#receives += 1;
      const record = sqsRecord(copy.message, { messageId: `sqs-${this.#receives}` });
      if (!step.fifo) return record;
      const groupId = copy.message.orderKey ?? copy.message.aggregateId;
      return { ...record, attributes: { ...record.attributes, MessageGroupId: groupId } };
    });
    const silent = { info: () => undefined, warn: () => undefined };
    try {
      const { response, topics } = await consumeSqsEvent({ Records: records }, lambdaContext(), {
        plan: planEffect,
        deps: this.#consumeDeps(),
        logger: silent,
        conflictKeys: (message) => [message.aggregateId],
      });
      const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      this.#count('batch record failed', failed.size);
      this.#count('batch', 1);
      for (const counts of Object.values(topics)) this.#count('batch parked', counts.parked);
      this.#queue.push(...copies.filter((_, index) => failed.has(records[index]?.messageId ?? '')));
    } catch {
      this.#count('batch failed');
      this.#queue.push(...copies);
    }
  }

  /** The admin core's dependencies over the world's tables, on `client`. */
  #adminDeps(client: DynamoDBDocumentClient): AdminDeps {
    const unused = (): never => {
      throw new Error('the world models its queues itself');
    };
    const queues: AdminQueues = {
      receive: unused,
      send: unused,
      delete: unused,
      changeVisibility: unused,
      depth: unused,
    };
    const everyTopic = (value: string) => Object.fromEntries(WORLD_TOPICS.map((topic) => [topic, value]));
    return dynamoAdminDeps<DynamoAdminDepsOptions>({
      client,
      queues,
      outboxTable: 'outbox',
      auditTable: 'audit',
      topicQueues: everyTopic(QUEUE),
      deadLetterQueues: everyTopic(`${QUEUE}-dlq`),
      deliveryInboxes: everyTopic('inbox'),
      orderedTopics: this.#ordering,
      dueShards: DEFAULT_SWEEPER_SETTINGS.dueShards,
      retentionDays: 30,
      clock: this.clock.now,
      newId: () => {
        this.#actions += 1;
        return `${this.clock.now().getTime()}-${String(this.#actions).padStart(6, '0')}`;
      },
      sleep: async () => undefined,
    });
  }

  /** The first of `rows` after sorting by id, counting `pick` round. */
  static #chosen<T extends Record<string, unknown>>(rows: readonly T[], pick: number): T | undefined {
    const sorted = [...rows].sort((a, b) => String(a.messageId).localeCompare(String(b.messageId)));
    return sorted.length === 0 ? undefined : sorted[pick % sorted.length];
  }

  /** Runs one operator action on `client`; a refusal the admin core names (409, 404…) is an expected outcome. */
  async #operate(action: OperatorAction, client: DynamoDBDocumentClient): Promise<void> {
    const deps = this.#adminDeps(client);
    const actor = 'local:operator';
    try {
      const rows = await this.#rows('outbox');
      const withStatus = (...statuses: string[]) =>
        rows.filter((row) => statuses.includes(String(row.status)));
      switch (action.op) {
        case 'replay': {
          const target = OrderingWorld.#chosen(withStatus('FAILED', 'CANCELLED'), action.pick);
          if (target === undefined) return;
          await replayMessage(deps, { messageId: String(target.messageId), reason: 'replayed', actor });
          this.#count('operator replayed');
          return;
        }
        case 'bulkReplay': {
          const topic = WORLD_TOPICS[action.topic % WORLD_TOPICS.length] ?? UNORDERED_TOPIC;
          const report = await bulkReplay(deps, {
            topic,
            includeCancelled: action.includeCancelled,
            reason: 'bulk replay',
            actor,
            ratePerSecond: 1_000,
            dryRun: false,
          });
          this.#count('operator bulk-replayed');
          this.#count('operator bulk-replayed messages', report.replayed);
          return;
        }
        case 'cancel': {
          const target = OrderingWorld.#chosen(withStatus('PENDING', 'FAILED'), action.pick);
          if (target === undefined) return;
          await cancelMessage(deps, { messageId: String(target.messageId), reason: 'cancelled', actor });
          this.#count('operator cancelled');
          return;
        }
        case 'erase': {
          const aggregates = [...this.#written.keys()].sort();
          const aggregateId = aggregates[action.pick % Math.max(1, aggregates.length)];
          if (aggregateId === undefined) return;
          await eraseAggregate(deps, { aggregateId, reason: 'erased', actor });
          const left = new Set(
            rows.filter((row) => row.aggregateId === aggregateId).map((row) => row.messageId),
          );
          const after = new Set((await this.#rows('outbox')).map((row) => row.messageId));
          for (const messageId of left) if (!after.has(messageId)) this.#erased.add(String(messageId));
          this.#count('operator erased');
          return;
        }
        case 'skip': {
          const ordered = withStatus('PENDING', 'FAILED', 'CANCELLED').filter(
            (row) => row.orderKey !== undefined,
          );
          const target = OrderingWorld.#chosen(ordered, action.pick);
          if (target === undefined) return;
          await skipOrderGap(deps, {
            orderKey: String(target.orderKey),
            seq: Number(target.seq),
            reason: 'skipped',
            actor,
          });
          this.#count('operator skipped');
          return;
        }
        case 'recover': {
          for (const topic of WORLD_TOPICS) {
            await bulkReplay(deps, { topic, reason: 'recover', actor, ratePerSecond: 1_000, dryRun: false });
          }
          this.#queue.push(...this.#deadLetters);
          this.#deadLetters = [];
          this.#count('operator recovered');
          return;
        }
      }
    } catch (error) {
      if (!(error instanceof AdminError)) throw error;
      this.#count(`operator refused ${error.code}`);
    }
  }

  /** A client that runs `interject` (once, to its end) just before its call number `at` (0-based). */
  #hooked(at: number, interject: () => Promise<void>): DynamoDBDocumentClient {
    const inner = this.db.asDocumentClient();
    let calls = 0;
    return {
      send: async (command: unknown) => {
        if (calls === at) {
          calls += 1;
          await interject();
        } else calls += 1;
        return inner.send(command as never);
      },
    } as unknown as DynamoDBDocumentClient;
  }

  async #interleave(step: Extract<Step, { kind: 'interleave' }>): Promise<void> {
    const client = this.#hooked(step.at, async () => {
      this.#count(`interleaved during ${step.during}`);
      await this.#operate(step.action, this.db.asDocumentClient());
    });
    switch (step.during) {
      case 'sweep':
        await this.#sweep(1, client);
        return;
      case 'deliver':
        await this.#deliver({ kind: 'deliver', pick: step.pick, fate: 'ack', crashAt: 0 }, client);
        return;
      case 'stream':
        await this.#relay(
          this.#stream.map((_, position) => position),
          client,
        );
        return;
      case 'operator':
        await this.#operate(step.first, client);
        return;
    }
  }

  /** The order key of aggregate `index`'s messages, or undefined when they are not ordered. */
  #orderKeyOf(index: number): string | undefined {
    const mode = this.#plans[index]?.mode;
    return mode === undefined || mode === 'unordered' ? undefined : orderKeyOfAggregate(index, mode);
  }

  /**
   * Per ordered aggregate: the seq its consumer's cursor stands at, and the seqs of its messages in the outbox
   * (erased ones are gone), by seq.
   */
  async #sequences(): Promise<{ orderKey: string; lastSeq: number; rows: Record<string, unknown>[] }[]> {
    const outbox = await this.#rows('outbox');
    const inbox = await this.#rows('inbox');
    return [...this.#plans.keys()].flatMap((index) => {
      const orderKey = this.#orderKeyOf(index);
      if (orderKey === undefined) return [];
      const cursor = inbox.find((row) => row.messageId === cursorKeyOf(orderKey));
      const lastSeq = typeof cursor?.lastSeq === 'number' ? cursor.lastSeq : 0;
      const rows = outbox
        .filter((row) => row.orderKey === orderKey)
        .sort((a, b) => Number(a.seq) - Number(b.seq));
      return [{ orderKey, lastSeq, rows }];
    });
  }

  /** Whether some order key's consumer still waits for a seq a later message of it is behind. */
  async #gapLeft(): Promise<boolean> {
    return (await this.#sequences()).some(({ lastSeq, rows }) =>
      rows.some((row) => Number(row.seq) > lastSeq && row.status !== 'CANCELLED'),
    );
  }

  /**
   * Skips every gap only an operator can close: the consumer waits for a seq whose message is CANCELLED or gone
   * (erased) while a later message of the order key is still to be applied.
   */
  async #closeGaps(): Promise<void> {
    const deps = this.#adminDeps(this.db.asDocumentClient());
    for (const { orderKey, lastSeq, rows } of await this.#sequences()) {
      const next = lastSeq + 1;
      if (!rows.some((row) => Number(row.seq) > next && row.status !== 'CANCELLED')) continue;
      const blocking = rows.find((row) => Number(row.seq) === next);
      if (blocking !== undefined && blocking.status !== 'CANCELLED') continue;
      try {
        await skipOrderGap(deps, {
          orderKey,
          seq: next,
          reason: 'gap closed at the end',
          actor: 'local:operator',
        });
        this.#count('gap closed by a skip');
      } catch (error) {
        if (!(error instanceof AdminError)) throw error;
        this.#count(`gap not closed ${error.code}`);
      }
    }
  }

  async #rows(table: string): Promise<Record<string, unknown>[]> {
    const rows = await this.db.send(new ScanCommand({ TableName: table, ConsistentRead: true }));
    return (rows.Items ?? []) as Record<string, unknown>[];
  }
}

/** The order key of aggregate `index`'s ordered messages: scope `order` when versioned, `cart` when counted. */
export function orderKeyOfAggregate(index: number, mode: Exclude<AggregateMode, 'unordered'>): string {
  return orderKeyOf(mode === 'counter' ? 'cart' : 'order', OrderingWorld.aggregateId(index));
}
