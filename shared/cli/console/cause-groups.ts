/**
 * FAILED deliveries grouped by why they failed: the error's kind and its message with the parts that differ from
 * one message to the next (ids, numbers, times) masked, so that a thousand messages refused for one reason are one
 * line an operator can read, and replay, together. Pure.
 */
import { createHash } from 'node:crypto';
import type { MessageSummary } from '../../admin/message-summary.ts';

/** A FAILED delivery as the grouping reads it: a listing's summary. */
export type FailedDelivery = Pick<
  MessageSummary,
  'messageId' | 'subscriber' | 'topic' | 'aggregateId' | 'lastError' | 'createdAt' | 'updatedAt'
>;

/** Why a delivery failed, with what varies masked. */
export interface Cause {
  /** The error's name (`InternalError`, `QueueDoesNotExist`); empty when the text names none. */
  readonly kind: string;
  /** The error's message, ids shown as `<id>`, numbers as `<n>`, instants as `<time>`. */
  readonly message: string;
  /** A short stable id of the cause, for a URL (`/failures?cause=…`) and a replay request. */
  readonly id: string;
}

/** The FAILED deliveries of one cause. */
export interface CauseGroup extends Cause {
  readonly count: number;
  /** When the first and the last of them failed (their `updatedAt`). */
  readonly firstAt: string;
  readonly lastAt: string;
  readonly topics: readonly string[];
  /** The subscribers whose deliveries they are; empty for messages delivered to one queue. */
  readonly subscribers: readonly string[];
  /** One of them as it was recorded, unmasked: what the operator looks at first. */
  readonly example: {
    readonly messageId: string;
    readonly subscriber?: string;
    readonly lastError: string;
  };
}

/** Longest masked message kept: a stack trace or a whole payload in an error says no more past this. */
const MAX_MESSAGE_CHARACTERS = 300;

/** What a delivery without a recorded error is grouped under. */
const NO_ERROR = 'no error recorded';

/**
 * The masks, in order: a later one must not see the text an earlier one replaced. Ids first (UUIDs, ULIDs, hex
 * digests, and any run of letters and digits of eight or more that has both, such as request ids), then instants,
 * then every remaining number.
 */
const MASKS: readonly (readonly [RegExp, string])[] = [
  [/\b[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\b/gi, '<id>'],
  [/\b\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?(?:Z|[+-]\d{2}:?\d{2})?/g, '<time>'],
  [/\b[0-9A-HJKMNP-TV-Z]{26}\b/gi, '<id>'],
  [/\b(?=[A-Za-z0-9]*\d)(?=[A-Za-z0-9]*[A-Za-z])[A-Za-z0-9]{8,}\b/g, '<id>'],
  [/\d+(?:\.\d+)?/g, '<n>'],
];

/**
 * `text` with ids, instants and numbers masked and its spaces collapsed.
 * @example
 * maskVariables('message 01HWTS3E000000000000000001 refused after 3 attempts'); // 'message <id> refused after <n> attempts'
 */
export function maskVariables(text: string): string {
  let masked = text.replace(/\s+/g, ' ').trim();
  for (const [pattern, mask] of MASKS) masked = masked.replace(pattern, mask);
  return masked.length > MAX_MESSAGE_CHARACTERS ? `${masked.slice(0, MAX_MESSAGE_CHARACTERS)}…` : masked;
}

/**
 * The cause of a `lastError`: `Name: message` (as the library records an error) gives the kind and the message;
 * other text is all message.
 * @example
 * causeOf('InternalError: queue 42 refused'); // { kind: 'InternalError', message: 'queue <n> refused', id: '…' }
 */
export function causeOf(lastError: string | undefined): Cause {
  const text = lastError?.trim() ?? '';
  if (text === '') return withId('', NO_ERROR);
  const named = /^([A-Za-z_$][\w$.]*): ([\s\S]*)$/.exec(text);
  return named === null
    ? withId('', maskVariables(text))
    : withId(named[1] ?? '', maskVariables(named[2] ?? ''));
}

function withId(kind: string, message: string): Cause {
  const id = createHash('sha256').update(`${kind}\n${message}`).digest('base64url').slice(0, 16);
  return { kind, message, id };
}

/**
 * The deliveries grouped by cause, the largest group first (then the most recent). Each group lists its topics
 * and subscribers in name order.
 * @example
 * const [worst] = groupByCause(failed); // { kind: 'InternalError', message: 'rejected by <n> of <n>', count: 812, … }
 */
export function groupByCause(deliveries: readonly FailedDelivery[]): CauseGroup[] {
  const groups = new Map<
    string,
    {
      cause: Cause;
      count: number;
      firstAt: string;
      lastAt: string;
      topics: Set<string>;
      subscribers: Set<string>;
      example: CauseGroup['example'];
    }
  >();
  for (const delivery of deliveries) {
    const cause = causeOf(delivery.lastError);
    const at = delivery.updatedAt || delivery.createdAt;
    const group = groups.get(cause.id);
    if (group === undefined) {
      groups.set(cause.id, {
        cause,
        count: 1,
        firstAt: at,
        lastAt: at,
        topics: new Set([delivery.topic]),
        subscribers: new Set(delivery.subscriber === undefined ? [] : [delivery.subscriber]),
        example: {
          messageId: delivery.messageId,
          ...(delivery.subscriber === undefined ? {} : { subscriber: delivery.subscriber }),
          lastError: delivery.lastError ?? '',
        },
      });
      continue;
    }
    group.count += 1;
    if (at < group.firstAt) group.firstAt = at;
    if (at > group.lastAt) group.lastAt = at;
    group.topics.add(delivery.topic);
    if (delivery.subscriber !== undefined) group.subscribers.add(delivery.subscriber);
  }
  return [...groups.values()]
    .map(
      (group): CauseGroup => ({
        ...group.cause,
        count: group.count,
        firstAt: group.firstAt,
        lastAt: group.lastAt,
        topics: [...group.topics].sort(),
        subscribers: [...group.subscribers].sort(),
        example: group.example,
      }),
    )
    .sort((a, b) => b.count - a.count || (a.lastAt < b.lastAt ? 1 : a.lastAt > b.lastAt ? -1 : 0));
}

/**
 * The deliveries of the cause `causeId`, oldest first (by creation, then id and subscriber): the order a replay of
 * the group takes them in, as a topic's bulk replay does.
 */
export function membersOf(deliveries: readonly FailedDelivery[], causeId: string): FailedDelivery[] {
  return deliveries
    .filter((delivery) => causeOf(delivery.lastError).id === causeId)
    .sort(
      (a, b) =>
        compare(a.createdAt, b.createdAt) ||
        compare(a.messageId, b.messageId) ||
        compare(a.subscriber ?? '', b.subscriber ?? ''),
    );
}

function compare(a: string, b: string): number {
  return a < b ? -1 : a > b ? 1 : 0;
}
