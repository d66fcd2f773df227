import { decodeTime, ulid } from 'ulid';
import { z } from 'zod';

/** Version of the envelope layout; bumped when a field changes meaning. */
export const ENVELOPE_SCHEMA_VERSION = 1 as const;

/** A ULID: 26 Crockford base32 characters, sortable by creation time. */
export const messageIdSchema = z.string().regex(/^[0-9A-HJKMNP-TV-Z]{26}$/, 'must be a ULID');

/** Topic names route messages to queues and select retry policies, e.g. `order.created`. */
export const topicSchema = z
  .string()
  .regex(/^[a-z][a-z0-9-]*(\.[a-z][a-z0-9-]*)+$/, 'must be dotted lowercase, e.g. order.created');

/** Headers carried alongside the payload; `traceparent` is passed through untouched (W3C trace context). */
export const headersSchema = z.record(z.string(), z.string());

/** What travels on the wire: the SQS message body, and the outbox item's message fields. */
export const envelopeSchema = z.object({
  messageId: messageIdSchema,
  topic: topicSchema,
  // 128: SQS FIFO's MessageGroupId limit, since the aggregate is the message group.
  aggregateId: z.string().min(1).max(128),
  payload: z.unknown(),
  headers: headersSchema,
  createdAt: z.iso.datetime(),
  schemaVersion: z.literal(ENVELOPE_SCHEMA_VERSION),
});

/** A message as it is written to the outbox and delivered to consumers. */
export type Envelope<TPayload = unknown> = Omit<z.infer<typeof envelopeSchema>, 'payload'> & {
  payload: TPayload;
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
  envelopeSchema.parse(envelope);
  return envelope;
}

/** Parses an unknown value (an SQS body, a stream image) into an envelope, or throws a ZodError. */
export function parseEnvelope(value: unknown): Envelope {
  return envelopeSchema.parse(value) as Envelope;
}

/** The creation time encoded in a ULID message id. */
export function messageIdTime(messageId: string): Date {
  return new Date(decodeTime(messageId));
}
