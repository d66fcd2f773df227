/** Stream records of the outbox table as DynamoDB writes them when TTL, a caller or a writer changes an item. */
import { marshall } from '@aws-sdk/util-dynamodb';
import type { DynamoDBRecord, AttributeValue as StreamAttributeValue } from 'aws-lambda';
import { MessageStatus } from '../../../shared/message/message-status.ts';
import { FIXED_NOW, outboxItem, testMessageId } from '../../support/factories.ts';

/** Options of {@link ttlRemoval}. */
export interface TtlRemovalOptions {
  readonly sequenceNumber?: string;
  /** When DynamoDB deleted the item (the record's ApproximateCreationDateTime). */
  readonly at?: Date;
  /** The item as it was; `null` for a stream without old images. */
  readonly oldImage?: Record<string, unknown> | null;
}

/** A CONFIRMED message `n`, as it is when TTL deletes it. */
export function expiredItem(n: number): Record<string, unknown> {
  return {
    ...outboxItem({ messageId: testMessageId(n) }),
    status: MessageStatus.CONFIRMED,
    outcome: 'APPLIED',
    expiresAt: Math.floor(FIXED_NOW.getTime() / 1000),
  };
}

/** A stream record of DynamoDB deleting an expired item (the TTL service principal, the old image). */
export function ttlRemoval(options: TtlRemovalOptions = {}): DynamoDBRecord {
  const sequenceNumber = options.sequenceNumber ?? '100000000000000000001';
  const image = options.oldImage === undefined ? expiredItem(1) : options.oldImage;
  return {
    eventID: `event-${sequenceNumber}`,
    eventName: 'REMOVE',
    eventSource: 'aws:dynamodb',
    eventVersion: '1.1',
    awsRegion: 'eu-west-1',
    eventSourceARN: 'arn:aws:dynamodb:eu-west-1:123456789012:table/outbox/stream/2024-05-01T00:00:00.000',
    userIdentity: { type: 'Service', principalId: 'dynamodb.amazonaws.com' },
    dynamodb: {
      ApproximateCreationDateTime: Math.floor((options.at ?? FIXED_NOW).getTime() / 1000),
      Keys: { messageId: { S: String(image?.messageId ?? testMessageId(1)) } },
      SequenceNumber: sequenceNumber,
      SizeBytes: 512,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
      ...(image === null
        ? {}
        : {
            // The SDK's AttributeValue and aws-lambda's describe the same wire shape.
            OldImage: marshall(image, { removeUndefinedValues: true }) as unknown as Record<
              string,
              StreamAttributeValue
            >,
          }),
    },
  };
}

/** The same record made by a caller's DeleteItem (an erase, an operator): no service identity. */
export function callerRemoval(options: TtlRemovalOptions = {}): DynamoDBRecord {
  const { userIdentity: _identity, ...record } = ttlRemoval(options);
  return record;
}
