import { decodeTime, ulid } from 'ulid';
import * as z from 'zod/mini';
import { InvalidMessageError } from '../errors.ts';
import { parse, safeParse } from '../validation/safe-parse.ts';
import { CONTROL_TOPIC_PREFIX, isControlTopic } from './control-topics.ts';
import { assertPlainJson } from './plain-json.ts';

/** Version of the envelope layout; bumped when a field changes meaning. */
export const ENVELOPE_SCHEMA_VERSION = 1 as const;

/** A ULID: 26 Crockford base32 characters, sortable by creation time. */
export const messageIdSchema = z.string().check(z.regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a ULID'));

/**
 * Topic names route messages to queues and select retry policies, e.g. `order.created`. The `outbox.` namespace is
 * the outbox's own (its control messages to subscribers): a producer's topic there is refused wherever topics are
 * checked — settings, the writer, the construct.
 */
export const topicSchema = z.string().check(
  z.regex(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/, 'must be dotted lowercase, e.g. order.created'),
  z.refine(
    (topic) => !isControlTopic(topic),
    `must not start with ${CONTROL_TOPIC_PREFIX}: that namespace is reserved for the outbox's own messages`,
  ),
);

/** Headers carried alongside the payload; `traceparent` is passed through untouched (W3C trace context). */
export const headersSchema = z.record(z.string(), z.string());

/** What a producer writes: the SQS message body, and the outbox item's message fields. Strict. */
export const envelopeSchema = z.object({
  messageId: messageIdSchema,
  topic: topicSchema,
  // 128: SQS FIFO's MessageGroupId limit, since the aggregate is the message group.
  aggregateId: z.string().check(z.minLength(1), z.maxLength(128)),
  payload: z.unknown(),
  headers: headersSchema,
  createdAt: z.iso.datetime(),
  schemaVersion: z.literal(ENVELOPE_SCHEMA_VERSION),
  // Ordered topics only, both or neither: the aggregate's sequence (`<scope>#<aggregateId>`, at most 128 for a
  // FIFO group) and the message's place in it (1, 2, 3… without gaps), assigned by the writer.
  orderKey: z.optional(z.string().check(z.minLength(1), z.maxLength(128))),
  seq: z.optional(z.number().check(z.int(), z.minimum(1))),
});

/**
 * What a consumer accepts: tolerant, because a message cannot be answered with a 400. Unknown fields are
 * ignored and a newer `schemaVersion` is read as long as the fields this version needs are there; only the
 * message id (the dedupe key) and the routing fields must be well formed.
 */
export const receivedEnvelopeSchema = z.object({
  messageId: messageIdSchema,
  topic: z.string().check(z.minLength(1)),
  aggregateId: z.string().check(z.minLength(1)),
  payload: z.unknown(),
  headers: z._default(headersSchema, {}),
  createdAt: z.string().check(z.minLength(1)),
  schemaVersion: z.number().check(z.int(), z.minimum(1)),
  orderKey: z.optional(z.string().check(z.minLength(1))),
  seq: z.optional(z.number().check(z.int(), z.minimum(1))),
});

/** A message as it is written to the outbox and delivered to consumers. */
export type Envelope<TPayload = unknown> = Omit<
  z.infer<typeof envelopeSchema>,
  'payload' | 'schemaVersion'
> & {
  payload: TPayload;
  /** The envelope layout version it was written with ({@link ENVELOPE_SCHEMA_VERSION} by this library). */
  schemaVersion: number;
};

/** What a caller supplies to create a message; id, time and version are filled in. */
export interface NewMessage<TPayload = unknown> {
  readonly topic: string;
  readonly aggregateId: string;
  readonly payload: TPayload;
  readonly headers?: Readonly<Record<string, string>>;
  /** Supply to make retries of the same request produce the same message id. */
  readonly messageId?: string;
}

/**
 * Builds a validated envelope with a fresh ULID.
 * @example
 * const message = createMessage({ topic: 'order.created', aggregateId: orderId, payload: order });
 */
export function createMessage<TPayload>(
  input: NewMessage<TPayload>,
  now: Date = new Date(),
): Envelope<TPayload> {
  const messageId = input.messageId ?? ulid(now.getTime());
  const envelope: Envelope<TPayload> = {
    messageId,
    topic: input.topic,
    aggregateId: input.aggregateId,
    payload: input.payload,
    headers: { ...(input.headers ?? {}) },
    createdAt: now.toISOString(),
    schemaVersion: ENVELOPE_SCHEMA_VERSION,
  };
  assertValidMessage(envelope);
  return envelope;
}

/**
 * Throws an {@link InvalidMessageError} naming the first field of `envelope` that breaks the envelope's rules,
 * or the first value of its payload or headers that is not plain JSON (see `assertPlainJson`).
 */
export function assertValidMessage(envelope: Envelope): void {
  const parsed = safeParse(envelopeSchema, envelope);
  if (!parsed.success) {
    const issue = parsed.error.issues[0];
    const path = (issue?.path ?? []).map((key) => String(key)).join('.');
    throw new InvalidMessageError(path || '(message)', issue?.message ?? 'invalid');
  }
  if ((envelope.orderKey === undefined) !== (envelope.seq === undefined)) {
    throw new InvalidMessageError(
      envelope.orderKey === undefined ? 'orderKey' : 'seq',
      'orderKey and seq are set together (an ordered topic) or not at all',
    );
  }
  assertPlainJson(envelope.payload, 'payload');
  assertPlainJson(envelope.headers, 'headers');
}

/** Reads a received value (an SQS body) tolerantly into an envelope, or throws a ZodError saying why not. */
export function parseEnvelope(value: unknown): Envelope {
  return parse(receivedEnvelopeSchema, value);
}

/** The creation time encoded in a ULID message id. */
export function messageIdTime(messageId: string): Date {
  return new Date(decodeTime(messageId));
}
