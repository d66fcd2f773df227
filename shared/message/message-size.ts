/**
 * How SQS sizes a message, whatever sends it: the body and the attributes the message carries on the wire, the
 * bytes SQS counts and the most it accepts. Pure and SDK-free, so the writer refuses a message the relay could
 * never send by the relay's own measure.
 */
import type { Envelope } from './envelope.ts';

/** The largest message SQS accepts by default, body and attributes together: 256 KiB. */
export const SQS_MAX_MESSAGE_BYTES = 256 * 1024;

/** Attribute names carried on every SQS message, so consumers and tooling can read them without the body. */
export const MESSAGE_ATTRIBUTES = {
  messageId: 'message_id',
  topic: 'topic',
  traceparent: 'traceparent',
} as const;

/** The data type of every attribute a message carries (SQS counts it against the size too). */
export const ATTRIBUTE_DATA_TYPE = 'String';

/**
 * Characters JSON leaves raw that SQS refuses. SQS accepts #x9 | #xA | #xD | #x20–#xD7FF | #xE000–#xFFFD |
 * #x10000–#x10FFFF; JSON.stringify already escapes the control characters below #x20 and lone surrogates, so
 * only the two noncharacters U+FFFE and U+FFFF are left.
 */
const OUTSIDE_SQS_CHARACTERS = /[\uFFFE\uFFFF]/g;

/** A W3C trace context `traceparent`: version, trace id, parent id, flags. */
const TRACEPARENT = /^[0-9a-f]{2}-[0-9a-f]{32}-[0-9a-f]{16}-[0-9a-f]{2}$/;

/**
 * The SQS body of a message: the envelope as JSON, with every character SQS would refuse written as a JSON
 * `\uXXXX` escape, so the consumer's JSON.parse gives back exactly the payload that was written.
 */
export function messageBody(message: Envelope): string {
  return JSON.stringify(message).replace(
    OUTSIDE_SQS_CHARACTERS,
    (character) => `\\u${character.charCodeAt(0).toString(16).padStart(4, '0')}`,
  );
}

/**
 * The string attributes of a message, by name: `message_id`, `topic` and, when it is a well-formed W3C trace
 * context, `traceparent` (anything else stays in the body's headers: a malformed attribute would make SQS refuse
 * the message on every attempt).
 */
export function messageAttributeValues(message: Envelope): Record<string, string> {
  const values: Record<string, string> = {
    [MESSAGE_ATTRIBUTES.messageId]: message.messageId,
    [MESSAGE_ATTRIBUTES.topic]: message.topic,
  };
  const traceparent = message.headers.traceparent;
  if (traceparent !== undefined && TRACEPARENT.test(traceparent)) {
    values[MESSAGE_ATTRIBUTES.traceparent] = traceparent;
  }
  return values;
}

/**
 * The bytes SQS counts against its size limits: the body plus each attribute's name, type and value (system
 * attributes such as `AWSTraceHeader` do not count).
 */
export function messageSizeBytes(message: Envelope): number {
  let bytes = Buffer.byteLength(messageBody(message));
  for (const [name, value] of Object.entries(messageAttributeValues(message))) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(ATTRIBUTE_DATA_TYPE) + Buffer.byteLength(value);
  }
  return bytes;
}
