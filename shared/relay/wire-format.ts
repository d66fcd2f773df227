/**
 * How a message looks on the wire, whatever carries it: the body, the attributes and the size SQS counts.
 * Pure (types only from the SQS client), so the relay core can size batches without the adapter.
 */
import type {
  MessageAttributeValue,
  MessageSystemAttributeNameForSends,
  MessageSystemAttributeValue,
} from '@aws-sdk/client-sqs';
import type { Envelope } from '../message/envelope.ts';
import { xrayTraceHeader } from '../observability/xray-trace-header.ts';
import { MESSAGE_ATTRIBUTES } from './message-publisher.ts';

/** The largest message SQS accepts by default, body and attributes together: 256 KiB. */
export const SQS_MAX_MESSAGE_BYTES = 256 * 1024;

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
 * The SQS message attributes of a message: `message_id`, `topic` and, when it is a well-formed W3C trace
 * context, `traceparent` (anything else stays in the body's headers: a malformed attribute would make SQS refuse
 * the message on every attempt).
 */
export function messageAttributes(message: Envelope): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [MESSAGE_ATTRIBUTES.messageId]: { DataType: 'String', StringValue: message.messageId },
    [MESSAGE_ATTRIBUTES.topic]: { DataType: 'String', StringValue: message.topic },
  };
  const traceparent = message.headers.traceparent;
  if (traceparent !== undefined && TRACEPARENT.test(traceparent)) {
    attributes[MESSAGE_ATTRIBUTES.traceparent] = { DataType: 'String', StringValue: traceparent };
  }
  return attributes;
}

/**
 * The SQS message system attributes of a message: `AWSTraceHeader`, the X-Ray form of its `traceparent`, when
 * that is a valid W3C trace context; `undefined` otherwise. SQS does not count system attributes against the
 * message size, so {@link messageSizeBytes} leaves them out.
 */
export function messageSystemAttributes(
  message: Envelope,
): Partial<Record<MessageSystemAttributeNameForSends, MessageSystemAttributeValue>> | undefined {
  const traceHeader = xrayTraceHeader(message.headers.traceparent);
  return traceHeader === undefined
    ? undefined
    : { AWSTraceHeader: { DataType: 'String', StringValue: traceHeader } };
}

/** The bytes SQS counts against its size limits: the body plus each attribute's name, type and value. */
export function messageSizeBytes(message: Envelope): number {
  let bytes = Buffer.byteLength(messageBody(message));
  for (const [name, attribute] of Object.entries(messageAttributes(message))) {
    bytes += Buffer.byteLength(name) + Buffer.byteLength(attribute.DataType ?? '');
    bytes += Buffer.byteLength(attribute.StringValue ?? '');
  }
  return bytes;
}

/** Whether `queueUrl` names a FIFO queue (SQS requires the `.fifo` suffix). */
export function isFifoQueue(queueUrl: string): boolean {
  return queueUrl.endsWith('.fifo');
}

/**
 * The FIFO fields of a message: its order key as message group (so SQS keeps an aggregate's sequence in order),
 * else its aggregate; and `<messageId>-<round>` as deduplication id. SQS drops a repeated deduplication id for
 * 5 minutes, so a resend in a new delivery round needs a new one, while a retry in the same round keeps it.
 */
export function fifoFields(
  message: Envelope,
  round: number,
): { readonly MessageGroupId: string; readonly MessageDeduplicationId: string } {
  return {
    MessageGroupId: message.orderKey ?? message.aggregateId,
    MessageDeduplicationId: `${message.messageId}-${round}`,
  };
}
