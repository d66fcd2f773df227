/**
 * How a message looks on the wire, whatever carries it: the body, the attributes and the size SQS counts.
 * Pure (types only from the SQS client), so the relay core can size batches without the adapter.
 */
import type { MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { Envelope } from '../message/envelope.ts';
import { MESSAGE_ATTRIBUTES } from './message-publisher.ts';

/** The SQS body of a message: the envelope as JSON. */
export function messageBody(message: Envelope): string {
  return JSON.stringify(message);
}

/** The SQS message attributes of a message: `message_id`, `topic` and, when present, `traceparent`. */
export function messageAttributes(message: Envelope): Record<string, MessageAttributeValue> {
  const attributes: Record<string, MessageAttributeValue> = {
    [MESSAGE_ATTRIBUTES.messageId]: { DataType: 'String', StringValue: message.messageId },
    [MESSAGE_ATTRIBUTES.topic]: { DataType: 'String', StringValue: message.topic },
  };
  const traceparent = message.headers.traceparent;
  // SQS refuses an attribute with an empty value, which would fail the entry on every retry.
  if (traceparent !== undefined && traceparent !== '') {
    attributes[MESSAGE_ATTRIBUTES.traceparent] = { DataType: 'String', StringValue: traceparent };
  }
  return attributes;
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
