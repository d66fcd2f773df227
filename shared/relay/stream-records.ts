import type { AttributeValue } from '@aws-sdk/client-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord } from 'aws-lambda';
import { z } from 'zod';
import { envelopeSchema } from '../message/envelope.ts';
import { MessageStatus } from '../message/message-status.ts';
import type { OutboxItem } from '../outbox/outbox-item.ts';

const outboxItemSchema = envelopeSchema.extend({
  status: z.enum(Object.values(MessageStatus) as [MessageStatus, ...MessageStatus[]]),
  attempts: z.number().int().min(0),
  updatedAt: z.string(),
});

/** Why a stream record carries nothing to forward. */
export type SkippedRecord = {
  readonly skipped: 'NOT_AN_INSERT' | 'NOT_PENDING' | 'NOT_AN_OUTBOX_ITEM';
  readonly detail?: string;
};

/**
 * The outbox message a stream record announces, or why there is none: only INSERTs of PENDING messages are
 * forwarded (status updates and TTL deletions also stream, but are not news).
 */
export function outboxItemFromStreamRecord(record: DynamoDBRecord): OutboxItem | SkippedRecord {
  if (record.eventName !== 'INSERT') return { skipped: 'NOT_AN_INSERT' };
  const image = record.dynamodb?.NewImage;
  if (image === undefined)
    return { skipped: 'NOT_AN_OUTBOX_ITEM', detail: 'no NewImage (stream view type?)' };
  // aws-lambda's AttributeValue and the SDK's describe the same wire shape.
  const raw = unmarshall(image as Record<string, AttributeValue>);
  const parsed = outboxItemSchema.safeParse(raw);
  if (!parsed.success) return { skipped: 'NOT_AN_OUTBOX_ITEM', detail: z.prettifyError(parsed.error) };
  const item = { ...raw, ...parsed.data } as OutboxItem;
  return item.status === MessageStatus.PENDING ? item : { skipped: 'NOT_PENDING' };
}
