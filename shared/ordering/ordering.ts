import * as z from 'zod/mini';

/**
 * Per-aggregate ordering of one topic. Topics that share a `scope` share one sequence per aggregate (e.g.
 * `order.created` and `order.cancelled` in scope `order`), and must go to one queue.
 */
export interface OrderedTopic {
  /** Lowercase letters, digits and `-`, 1–32 characters. */
  readonly scope: string;
  /**
   * Where the writer takes each message's seq from; every topic of a scope must name the same source, since two
   * sources would give two messages of one aggregate the same seq. @default 'counter'
   */
  readonly sequence?: SequenceSource;
  /**
   * How long a consumer may hold a message whose predecessor has not arrived before the gap alarm goes off and
   * the sweeper resends the predecessor, in ms.
   */
  readonly gapTimeoutMs: number;
}

/**
 * Where an ordered scope's seqs come from: `counter`, the sequence table's row per order key (read and advanced in
 * the write's transaction), or `aggregate-version`, the version each write gives for its aggregate
 * (`aggregateVersions`), which the business item keeps under its own condition.
 */
export const SequenceSource = { COUNTER: 'counter', AGGREGATE_VERSION: 'aggregate-version' } as const;

/** One of the {@link SequenceSource} values. */
export type SequenceSource = (typeof SequenceSource)[keyof typeof SequenceSource];

/** `'none'` (the default: messages may be applied in any order) or the topic's {@link OrderedTopic}. */
export type TopicOrdering = 'none' | OrderedTopic;

/** Ordering per topic; a topic not listed is `'none'`. */
export type OrderingByTopic = Readonly<Record<string, TopicOrdering>>;

/** The default time a gap may stay open before it is alarmed and its predecessor resent: 5 minutes. */
export const DEFAULT_GAP_TIMEOUT_MS = 5 * 60_000;

/** The longest gap timeout: 12 hours, the longest a SENT message waits for reconciliation. */
export const MAX_GAP_TIMEOUT_MS = 12 * 3_600_000;

/** An ordering scope: the first part of every order key of its topics. */
export const scopeSchema = z
  .string()
  .check(z.regex(/^[a-z0-9][a-z0-9-]{0,31}$/, 'must be 1–32 lowercase letters, digits or -'));

/** Between scope and aggregate id in an order key. */
export const ORDER_KEY_SEPARATOR = '#';

/**
 * The longest order key: SQS FIFO's MessageGroupId limit, since an ordered message's group is its order key.
 */
export const MAX_ORDER_KEY_LENGTH = 128;

/** The sequence an aggregate's messages of one scope are numbered in: `<scope>#<aggregateId>`. */
export function orderKeyOf(scope: string, aggregateId: string): string {
  return `${scope}${ORDER_KEY_SEPARATOR}${aggregateId}`;
}

/** The ordering of `topic`, or `undefined` when its messages are not ordered. */
export function orderedTopic(ordering: OrderingByTopic | undefined, topic: string): OrderedTopic | undefined {
  const setting = ordering?.[topic];
  return setting === undefined || setting === 'none' ? undefined : setting;
}

/** Where an ordered topic's seqs come from (`counter` unless it says otherwise). */
export function sequenceSourceOf(topic: OrderedTopic): SequenceSource {
  return topic.sequence ?? SequenceSource.COUNTER;
}

/**
 * Each scope whose topics name more than one seq source, with the topics by source: one scope must have one source,
 * or two messages of one aggregate could be given the same seq (one by its version, one by the counter). Pure.
 */
export function mixedSequenceSources(
  ordering: OrderingByTopic | undefined,
): { readonly scope: string; readonly topics: Readonly<Record<SequenceSource, readonly string[]>> }[] {
  const byScope = new Map<string, Record<SequenceSource, string[]>>();
  for (const [topic, setting] of Object.entries(ordering ?? {})) {
    if (setting === 'none') continue;
    const sources = byScope.get(setting.scope) ?? { counter: [], 'aggregate-version': [] };
    sources[sequenceSourceOf(setting)].push(topic);
    byScope.set(setting.scope, sources);
  }
  return [...byScope]
    .filter(([, sources]) => sources.counter.length > 0 && sources['aggregate-version'].length > 0)
    .map(([scope, topics]) => ({ scope, topics }));
}

/** The sentence a mixed scope is refused with, wherever it is found (settings, construct, writer). */
export function describeMixedSources(mixed: ReturnType<typeof mixedSequenceSources>[number]): string {
  return (
    `ordering scope '${mixed.scope}' takes its seqs from two sources (counter: ${mixed.topics.counter.join(', ')}; ` +
    `aggregate-version: ${mixed.topics['aggregate-version'].join(', ')}); the topics of one scope share each ` +
    "aggregate's sequence, so they must name one `sequence`"
  );
}
