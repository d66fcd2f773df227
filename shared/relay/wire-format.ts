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
import { ATTRIBUTE_DATA_TYPE, messageAttributeValues } from '../message/message-size.ts';
import { xrayTraceHeader } from '../observability/xray-trace-header.ts';

export { messageBody, messageSizeBytes, SQS_MAX_MESSAGE_BYTES } from '../message/message-size.ts';

/**
 * The SQS message attributes of a message: its string attributes (`message_id`, `topic`, a well-formed
 * `traceparent`) as `String` attributes, exactly those {@link messageSizeBytes} counts.
 */
export function messageAttributes(message: Envelope): Record<string, MessageAttributeValue> {
  return Object.fromEntries(
    Object.entries(messageAttributeValues(message)).map(([name, value]) => [
      name,
      { DataType: ATTRIBUTE_DATA_TYPE, StringValue: value },
    ]),
  );
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
