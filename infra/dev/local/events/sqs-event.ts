/** Turns SQS ReceiveMessage results into the records Lambda hands a function. Pure. */
import type { Message, MessageAttributeValue } from '@aws-sdk/client-sqs';
import type { SQSMessageAttribute, SQSRecord, SQSRecordAttributes } from 'aws-lambda';
import { batchItemFailureIds } from './batch-response.ts';

/** Where a message came from. */
export interface SqsSource {
  readonly queueArn: string;
  readonly region: string;
}

/**
 * The Lambda record for a received message: system attributes as strings, message attributes in Lambda's
 * camelCase form with binary values as base64.
 */
export function toLambdaSqsRecord(message: Message, source: SqsSource): SQSRecord {
  const attributes = message.Attributes ?? {};
  const record: SQSRecord = {
    messageId: message.MessageId ?? '',
    receiptHandle: message.ReceiptHandle ?? '',
    body: message.Body ?? '',
    attributes: {
      ...attributes,
      ApproximateReceiveCount: attributes.ApproximateReceiveCount ?? '1',
      SentTimestamp: attributes.SentTimestamp ?? '',
      SenderId: attributes.SenderId ?? '',
      ApproximateFirstReceiveTimestamp: attributes.ApproximateFirstReceiveTimestamp ?? '',
    } satisfies SQSRecordAttributes,
    messageAttributes: Object.fromEntries(
      Object.entries(message.MessageAttributes ?? {}).map(([name, value]) => [
        name,
        toLambdaAttribute(value),
      ]),
    ),
    md5OfBody: message.MD5OfBody ?? '',
    eventSource: 'aws:sqs',
    eventSourceARN: source.queueArn,
    awsRegion: source.region,
  };
  return message.MD5OfMessageAttributes === undefined
    ? record
    : { ...record, md5OfMessageAttributes: message.MD5OfMessageAttributes };
}

function toLambdaAttribute(value: MessageAttributeValue): SQSMessageAttribute {
  return {
    ...(value.StringValue === undefined ? {} : { stringValue: value.StringValue }),
    ...(value.BinaryValue === undefined
      ? {}
      : { binaryValue: Buffer.from(value.BinaryValue).toString('base64') }),
    stringListValues: value.StringListValues ?? [],
    binaryListValues: (value.BinaryListValues ?? []).map((item) => Buffer.from(item).toString('base64')),
    dataType: value.DataType ?? 'String',
  };
}

/**
 * Receipt handles of the messages to delete after an invocation that returned `result`: all but the
 * reported failures. `undefined` when the whole batch failed (a malformed response counts as failed, as in
 * Lambda): nothing is deleted and every message comes back after its visibility timeout.
 */
export function messagesToDelete(records: readonly SQSRecord[], result: unknown): SQSRecord[] | undefined {
  const failures = batchItemFailureIds(result);
  if (failures === undefined) return undefined;
  const ids = new Set(records.map((record) => record.messageId));
  if (failures.some((id) => !ids.has(id))) return undefined;
  const failed = new Set(failures);
  return records.filter((record) => !failed.has(record.messageId));
}
