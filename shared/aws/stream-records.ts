import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { describeError } from '../errors.ts';
import { safeUnmarshallOptions } from '../message/dynamo-numbers.ts';
import { MessageStatus } from '../message/message-status.ts';
import type { OutboxItem } from '../outbox/outbox-item.ts';
import { OUTBOX_KEYS } from './outbox-table/outbox-keys.ts';
import { readOutboxItem } from './outbox-table/read-outbox-item.ts';

/** What a stream record announces. */
export type StreamRecordContent =
  /** A new PENDING message to forward. */
  | { readonly kind: 'message'; readonly message: OutboxItem }
  /** A new PENDING message that can never be sent as stored: its own failure, recorded on it with the reason. */
  | {
      readonly kind: 'unsendable';
      readonly messageId: string;
      readonly attempts: number;
      readonly reason: string;
      /** When the image still names them, for the metrics and the log line. */
      readonly topic?: string;
      readonly aggregateId?: string;
    }
  /** Nothing to forward: an update or TTL deletion, a message not PENDING, or not an outbox item at all. */
  | {
      readonly kind: 'skipped';
      readonly reason: 'NOT_AN_INSERT' | 'NOT_PENDING' | 'NOT_AN_OUTBOX_ITEM';
      readonly detail?: string;
    };

/**
 * What a stream record of the outbox table announces: only INSERTs of PENDING messages are forwarded (status
 * updates and TTL deletions also stream, but are not news). A PENDING message whose image cannot be read is
 * reported as unsendable — never thrown, so it cannot fail the stream batch it came in.
 */
export function readStreamRecord(record: DynamoDBRecord): StreamRecordContent {
  if (record.eventName !== 'INSERT') return { kind: 'skipped', reason: 'NOT_AN_INSERT' };
  // aws-lambda's AttributeValue and the SDK's describe the same wire shape.
  const image = record.dynamodb?.NewImage as Record<string, AttributeValue> | undefined;
  if (image === undefined) {
    return { kind: 'skipped', reason: 'NOT_AN_OUTBOX_ITEM', detail: 'no NewImage (stream view type?)' };
  }
  const messageId = image[OUTBOX_KEYS.partitionKey]?.S;
  if (messageId === undefined) {
    return { kind: 'skipped', reason: 'NOT_AN_OUTBOX_ITEM', detail: `no string ${OUTBOX_KEYS.partitionKey}` };
  }
  if (image.status?.S !== MessageStatus.PENDING) return { kind: 'skipped', reason: 'NOT_PENDING' };
  try {
    return { kind: 'message', message: readOutboxItem(unmarshall(image, safeUnmarshallOptions())) };
  } catch (error) {
    const attempts = Number(image.attempts?.N ?? '0');
    const topic = image.topic?.S;
    const aggregateId = image.aggregateId?.S;
    return {
      kind: 'unsendable',
      messageId,
      ...(topic === undefined ? {} : { topic }),
      ...(aggregateId === undefined ? {} : { aggregateId }),
      attempts: Number.isSafeInteger(attempts) && attempts >= 0 ? attempts : 0,
      reason: `unreadable outbox item: ${describeError(error)}`,
    };
  }
}
