/**
 * The outbox's own messages to a subscriber. A subscriber is a service of its own, whose inbox the producer holds
 * no grant on: an operator's erase of an aggregate and skip of an ordering gap reach it as messages of the reserved
 * `outbox.` topics, which its consumer applies itself (the user's plan never sees one) and confirms by receipt like
 * any other. Their payloads carry ids only — message ids, order keys, seqs — never a business payload. Pure.
 */
import * as z from 'zod/mini';
import { PoisonMessageError } from '../errors.ts';
import { safeParse } from '../validation/safe-parse.ts';
import { ControlTopic } from './control-topics.ts';
import { type Envelope, messageIdSchema } from './envelope.ts';

/** What a subscriber's consumer records (and its receipt carries) for a control message. */
export const ControlOutcome = {
  /** The erase was applied: the subscriber holds no parked copy of the listed messages any more. */
  ERASED: 'ERASED',
  /** The cursor moved from `seq - 1` to `seq`. */
  SKIPPED: 'SKIPPED',
  /** The cursor was at or past `seq` already: nothing to do. */
  ALREADY_PAST: 'ALREADY_PAST',
  /** The cursor is further behind than `seq - 1`: nothing moved; the earlier seqs must be skipped or replayed first. */
  EARLIER_GAP: 'EARLIER_GAP',
} as const;

/** The longest order key a control message names: the envelope's bound (a FIFO message group's). */
const MAX_ORDER_KEY_LENGTH = 128;

const orderKeySchema = z.string().check(z.minLength(1), z.maxLength(MAX_ORDER_KEY_LENGTH));
const seqSchema = z.number().check(z.int(), z.minimum(1));

/**
 * The most messages one erase message lists: an aggregate with more is erased by several, so that each stays far
 * below SQS's 256 KiB (an entry is at most about 190 bytes) and the subscriber's consumer deletes a bounded number
 * of rows per message.
 */
export const MAX_ERASE_ENTRIES = 500;

/** One erased message, as the subscriber's consumer needs it: its id, and its place when its topic is ordered. */
export interface ErasedMessage {
  readonly messageId: string;
  /** The order key as the message carried it on the wire (the subscriber files it under its own name). */
  readonly orderKey?: string;
  readonly seq?: number;
}

const erasedMessageSchema = z.object({
  messageId: messageIdSchema,
  orderKey: z.optional(orderKeySchema),
  seq: z.optional(seqSchema),
});

const erasePayloadSchema = z.object({
  messages: z.array(erasedMessageSchema).check(z.minLength(1), z.maxLength(MAX_ERASE_ENTRIES)),
});

const skipPayloadSchema = z.object({ orderKey: orderKeySchema, seq: seqSchema });

/** The payload of an `outbox.erase` message. */
export interface ErasePayload {
  readonly messages: readonly ErasedMessage[];
}

/** The payload of an `outbox.skip` message: the order key as its messages carry it, and the seq to skip. */
export interface SkipPayload {
  readonly orderKey: string;
  readonly seq: number;
}

/** A control message read: what it asks of the subscriber. */
export type ControlRequest =
  | ({ readonly topic: typeof ControlTopic.ERASE } & ErasePayload)
  | ({ readonly topic: typeof ControlTopic.SKIP } & SkipPayload);

/**
 * What a control message asks. A payload that cannot be read, or a topic of the namespace this version does not
 * know (a newer producer's), is a {@link PoisonMessageError}: it is dead-lettered with the reason, never guessed at.
 */
export function readControl(message: Envelope): ControlRequest {
  if (message.topic === ControlTopic.ERASE) {
    const { messages } = payloadOf(message, erasePayloadSchema);
    return {
      topic: ControlTopic.ERASE,
      messages: messages.map(({ messageId, orderKey, seq }) => ({
        messageId,
        // An entry places its message only with both; one without the other is not ordered.
        ...(orderKey === undefined || seq === undefined ? {} : { orderKey, seq }),
      })),
    };
  }
  if (message.topic === ControlTopic.SKIP) {
    const { orderKey, seq } = payloadOf(message, skipPayloadSchema);
    return { topic: ControlTopic.SKIP, orderKey, seq };
  }
  throw new PoisonMessageError(
    `${message.messageId} is of topic ${message.topic}, which this version of the outbox does not know: upgrade the consumer`,
  );
}

function payloadOf<T>(message: Envelope, schema: z.ZodMiniType<T>): T {
  const read = safeParse(schema, message.payload);
  if (read.success) return read.data;
  const issue = read.error.issues[0];
  const where = issue?.path.map(String).join('.') ?? '';
  throw new PoisonMessageError(
    `${message.messageId} (${message.topic}) has an unreadable payload: ${where === '' ? '' : `${where} `}${issue?.message ?? 'is invalid'}`,
  );
}
