/**
 * The DynamoDB tables a `TransactionalOutbox` creates — the outbox, the audit trail, the sequence counters and
 * each consumer's inbox — keyed as the library's table modules read them, with the outbox's defaults (on demand,
 * point-in-time recovery, its key, its removal policy) under the user's overrides.
 */
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import { AUDIT_KEYS } from '../../shared/aws/audit-table.ts';
import { INBOX_KEYS } from '../../shared/aws/inbox-table.ts';
import { OUTBOX_KEYS, type OutboxIndexProjection } from '../../shared/aws/outbox-table.ts';
import { SEQUENCE_KEYS } from '../../shared/aws/sequence-table.ts';
import { TABLE_DEFAULTS } from './defaults.ts';
import type { OutboxScope } from './outbox-scope.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';

/**
 * The outbox table (`Table`): keyed `messageId`, with a stream of new and old images, TTL on `expiresAt` and the
 * `due`, `byAggregate`, `attention` and `byOrderKey` indexes. The key and the stream cannot be overridden.
 */
export function newOutboxTable(outbox: OutboxScope, overrides: Partial<dynamodb.TableProps>): dynamodb.Table {
  if (
    overrides.partitionKey !== undefined ||
    overrides.sortKey !== undefined ||
    overrides.stream !== undefined
  ) {
    outbox.report('outboxTableProps may not change the key or the stream of the outbox table');
  }
  const table = new dynamodb.Table(outbox.scope, 'Table', {
    ...tableDefaults(outbox),
    timeToLiveAttribute: OUTBOX_KEYS.ttlAttribute,
    ...overrides,
    partitionKey: { name: OUTBOX_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
    // The relay filters on INSERT; the old image lets an operator's tooling see what a transition changed.
    stream: dynamodb.StreamViewType.NEW_AND_OLD_IMAGES,
  });
  for (const index of [OUTBOX_KEYS.dueIndex, OUTBOX_KEYS.aggregateIndex, OUTBOX_KEYS.attentionIndex]) {
    table.addGlobalSecondaryIndex({
      indexName: index.name,
      partitionKey: { name: index.partitionKey, type: dynamodb.AttributeType.STRING },
      sortKey: { name: index.sortKey, type: dynamodb.AttributeType.STRING },
      // As the library's readers expect it (each index's projection is defined beside its keys).
      ...indexProjection(index.projection),
    });
  }
  // Sparse: only ordered messages carry orderKey and seq. Created whether or not a topic is ordered, so that
  // ordering a topic later changes no index of a table that already holds messages. seq is a number, so an
  // order key's messages sort (and range-query) by it.
  const orderIndex = OUTBOX_KEYS.orderIndex;
  table.addGlobalSecondaryIndex({
    indexName: orderIndex.name,
    partitionKey: { name: orderIndex.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: orderIndex.sortKey, type: dynamodb.AttributeType.NUMBER },
    ...indexProjection(orderIndex.projection),
  });
  markOutboxRole(table, OutboxResourceRole.OUTBOX_TABLE);
  return table;
}

/** The audit trail of operator actions (`AuditTable`), keyed `subject`/`actionId`; no TTL. */
export function newAuditTable(outbox: OutboxScope, overrides: Partial<dynamodb.TableProps>): dynamodb.Table {
  if (overrides.partitionKey !== undefined || overrides.sortKey !== undefined) {
    outbox.report('auditTableProps may not change the key of the audit table');
  }
  const table = new dynamodb.Table(outbox.scope, 'AuditTable', {
    ...tableDefaults(outbox),
    ...overrides,
    partitionKey: { name: AUDIT_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
    sortKey: { name: AUDIT_KEYS.sortKey, type: dynamodb.AttributeType.STRING },
  });
  markOutboxRole(table, OutboxResourceRole.AUDIT_TABLE);
  return table;
}

/**
 * The sequence table (`SequenceTable`): each order key's last seq, which a writer without an aggregate version
 * reads and advances in its transaction. No stream (counter updates are no messages) and no TTL (a counter that
 * vanished would restart an order key at 1).
 */
export function newSequenceTable(outbox: OutboxScope): dynamodb.Table {
  return new dynamodb.Table(outbox.scope, 'SequenceTable', {
    ...tableDefaults(outbox),
    partitionKey: { name: SEQUENCE_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
  });
}

/** A consumer's inbox (`<consumer id>Inbox`): keyed `messageId`, TTL on `expiresAt`. */
export function newInboxTable(
  outbox: OutboxScope,
  id: string,
  overrides: Partial<dynamodb.TableProps>,
): dynamodb.Table {
  if (overrides.partitionKey !== undefined || overrides.sortKey !== undefined) {
    outbox.report(`${id}: inboxTableProps may not change the key of the inbox table`);
  }
  return new dynamodb.Table(outbox.scope, id, {
    ...tableDefaults(outbox),
    timeToLiveAttribute: INBOX_KEYS.ttlAttribute,
    ...overrides,
    partitionKey: { name: INBOX_KEYS.partitionKey, type: dynamodb.AttributeType.STRING },
  });
}

/** What every table of the outbox starts from: on demand, PITR, the outbox's key and removal policy. */
function tableDefaults(
  outbox: OutboxScope,
): Pick<
  dynamodb.TableProps,
  'billingMode' | 'encryption' | 'encryptionKey' | 'pointInTimeRecoverySpecification' | 'removalPolicy'
> {
  return {
    billingMode: TABLE_DEFAULTS.billingMode,
    ...(outbox.encryptionKey === undefined
      ? {}
      : { encryption: dynamodb.TableEncryption.CUSTOMER_MANAGED, encryptionKey: outbox.encryptionKey }),
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: TABLE_DEFAULTS.pointInTimeRecovery },
    removalPolicy: outbox.removalPolicy ?? TABLE_DEFAULTS.removalPolicy,
  };
}

/** The CDK projection of an outbox index. */
function indexProjection(
  projection: OutboxIndexProjection,
): Pick<dynamodb.GlobalSecondaryIndexProps, 'projectionType' | 'nonKeyAttributes'> {
  if (projection.type === 'INCLUDE') {
    return {
      projectionType: dynamodb.ProjectionType.INCLUDE,
      nonKeyAttributes: [...(projection.nonKeyAttributes ?? [])],
    };
  }
  return {
    projectionType:
      projection.type === 'KEYS_ONLY' ? dynamodb.ProjectionType.KEYS_ONLY : dynamodb.ProjectionType.ALL,
  };
}
