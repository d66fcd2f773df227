import { ConfigError, InvalidMessageError } from '../errors.ts';
import type { Envelope } from '../message/envelope.ts';
import {
  describeMixedSources,
  MAX_ORDER_KEY_LENGTH,
  mixedSequenceSources,
  type OrderingByTopic,
  orderedTopic,
  orderKeyOf,
  SequenceSource,
  sequenceSourceOf,
} from './ordering.ts';

/** An aggregate's version after a write, by aggregate id: the seq its last ordered message in the write takes. */
export type AggregateVersions = Readonly<Record<string, number>>;

/** Where the seqs of one write come from. */
export interface SequenceSources {
  /** Which topics are ordered, and in which scope. @default - none */
  readonly ordering?: OrderingByTopic | undefined;
  /**
   * Versions the write's business actions set, by aggregate id: required for the aggregates of messages in scopes
   * numbered by aggregate version (their seqs end at the version), not used for scopes numbered by the counter.
   */
  readonly aggregateVersions?: AggregateVersions | undefined;
  /**
   * Each counted order key's last seq as read from the sequence table; an order key not listed has no counter
   * row yet (its messages start at 1, and the counter's update insists that it still has none).
   */
  readonly lastSeqs?: ReadonlyMap<string, number> | undefined;
}

/** How one order key's counter in the sequence table moves with a write. */
export interface CounterAdvance {
  readonly orderKey: string;
  /** The last seq the write read: the update holds only if it still is. `undefined`: no counter row yet. */
  readonly from: number | undefined;
  /** The last seq after the write: the seq of its last message of this order key. */
  readonly to: number;
}

/** A write's messages with their order keys and seqs, and the counters that move with them. */
export interface SequencedMessages {
  /** The messages in the order given; those of ordered topics carry `orderKey` and `seq`. */
  readonly messages: readonly Envelope[];
  /** One per counted order key, in the order its first message came. */
  readonly counters: readonly CounterAdvance[];
}

/** The ordered messages of one order key in a write, in the order given. */
interface OrderedRun {
  readonly orderKey: string;
  readonly aggregateId: string;
  /** Where the scope's seqs come from. */
  readonly source: SequenceSource;
  /** The topic of its first message, for the errors that name one. */
  readonly topic: string;
  readonly indexes: number[];
}

/**
 * Numbers the ordered messages of a write. Per order key, several messages take consecutive seqs in the order
 * given, from the one source their scope names: `aggregate-version` — the aggregate's version V in the write ends
 * them (`V - k + 1 … V`, no counter); `counter` — they follow the counter's last seq. Messages of unordered topics
 * are returned as they are. Pure. Throws InvalidMessageError for a message that carries `orderKey` or `seq` already
 * (the writer assigns them), an order key longer than SQS FIFO's 128-character group id, or a version missing for
 * a scope numbered by version or too small for the aggregate's messages in the write; ConfigError for a scope whose
 * topics name two sources. A version given for a scope numbered by the counter is not used: the source is the
 * scope's, never the write's, so two writes of one scope can never take their seqs from two sources.
 * @example
 * assignSeqs([created], {
 *   ordering: { 'order.created': { scope: 'order', gapTimeoutMs: 300_000, sequence: 'aggregate-version' } },
 *   aggregateVersions: { 'o-1': 1 },
 * });
 * // → messages: [{ ...created, orderKey: 'order#o-1', seq: 1 }], counters: []
 */
export function assignSeqs(messages: readonly Envelope[], sources: SequenceSources): SequencedMessages {
  const seqs = new Map<number, { orderKey: string; seq: number }>();
  const counters: CounterAdvance[] = [];
  for (const run of orderedRuns(messages, sources.ordering)) {
    const version = versionOf(run, sources.aggregateVersions);
    const from = version === undefined ? sources.lastSeqs?.get(run.orderKey) : undefined;
    const first = version === undefined ? (from ?? 0) + 1 : version - run.indexes.length + 1;
    for (const [offset, index] of run.indexes.entries()) {
      seqs.set(index, { orderKey: run.orderKey, seq: first + offset });
    }
    if (version === undefined) {
      counters.push({ orderKey: run.orderKey, from, to: first + run.indexes.length - 1 });
    }
  }
  return {
    messages: messages.map((message, index) => {
      const place = seqs.get(index);
      return place === undefined ? message : { ...message, orderKey: place.orderKey, seq: place.seq };
    }),
    counters,
  };
}

/**
 * The order keys of a write whose seqs come from the sequence table's counters (ordered messages of an aggregate
 * without a version in the write), in the order their first message came. Pure; refuses what
 * {@link assignSeqs} refuses.
 */
export function countedOrderKeys(messages: readonly Envelope[], sources: SequenceSources): string[] {
  return orderedRuns(messages, sources.ordering)
    .filter((run) => versionOf(run, sources.aggregateVersions) === undefined)
    .map((run) => run.orderKey);
}

/** The ordered messages grouped by order key, each group in the order given; checks what the writer refuses. */
function orderedRuns(messages: readonly Envelope[], ordering: OrderingByTopic | undefined): OrderedRun[] {
  const runs = new Map<string, OrderedRun>();
  for (const [index, message] of messages.entries()) {
    assertNoOrderFields(message);
    const topic = orderedTopic(ordering, message.topic);
    if (topic === undefined) continue;
    const orderKey = orderKeyOf(topic.scope, message.aggregateId);
    if (orderKey.length > MAX_ORDER_KEY_LENGTH) {
      throw new InvalidMessageError(
        'aggregateId',
        `makes the order key "${orderKey.slice(0, 40)}…" ${orderKey.length} characters long; at most ${MAX_ORDER_KEY_LENGTH} (an SQS FIFO message group id), scope and "#" included`,
      );
    }
    const source = sequenceSourceOf(topic);
    const run = runs.get(orderKey) ?? {
      orderKey,
      aggregateId: message.aggregateId,
      source,
      topic: message.topic,
      indexes: [],
    };
    if (run.source !== source) {
      // The settings refuse such a scope; an ordering built by hand may still carry one.
      const [mixed] = mixedSequenceSources(ordering);
      throw new ConfigError(
        mixed === undefined ? `scope of ${orderKey} mixes seq sources` : describeMixedSources(mixed),
      );
    }
    run.indexes.push(index);
    runs.set(orderKey, run);
  }
  return [...runs.values()];
}

/** The writer numbers ordered messages itself: a producer's own order key or seq would break the sequence. */
function assertNoOrderFields(message: Envelope): void {
  for (const field of ['orderKey', 'seq'] as const) {
    if (message[field] !== undefined) {
      throw new InvalidMessageError(field, 'is assigned by the writer for ordered topics; leave it unset');
    }
  }
}

/**
 * The version given for the run's aggregate when its scope is numbered by version (required then, and checked: the
 * run's first seq must be at least 1); `undefined` for a scope numbered by the counter.
 */
function versionOf(run: OrderedRun, versions: AggregateVersions | undefined): number | undefined {
  if (run.source === SequenceSource.COUNTER) return undefined;
  if (versions === undefined || !Object.hasOwn(versions, run.aggregateId)) {
    throw new InvalidMessageError(
      `aggregateVersions.${run.aggregateId}`,
      `is required: ${run.topic} is ordered in a scope numbered by aggregate version (${run.orderKey}), so the write must give the version it sets`,
    );
  }
  const version = versions[run.aggregateId];
  const count = run.indexes.length;
  if (typeof version !== 'number' || !Number.isSafeInteger(version) || version < count) {
    throw new InvalidMessageError(
      `aggregateVersions.${run.aggregateId}`,
      `must be a whole number of at least ${count} (the version this write sets; its ${count} message(s) of ${run.orderKey} take the seqs ending at it), got ${JSON.stringify(version)}`,
    );
  }
  return version;
}
