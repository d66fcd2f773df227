import { type Duration, Names } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type * as sqs from 'aws-cdk-lib/aws-sqs';

/**
 * Allows exactly `actions` on the table's own ARN — not its indexes (which `Table.grant` adds) and not the
 * replicas of a global table. Items live in the table, so item actions need nothing more.
 * @example
 * grantOnTable(outbox.table, relay, ['dynamodb:UpdateItem']);
 */
export function grantOnTable(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  actions: readonly string[],
): iam.Grant {
  return iam.Grant.addToPrincipal({ grantee, actions: [...actions], resourceArns: [table.tableArn] });
}

/** Allows `dynamodb:Query` on the named global secondary indexes of the table, and nothing else. */
export function grantQueryOnIndexes(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  indexNames: readonly string[],
): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:Query'],
    resourceArns: indexNames.map((name) => `${table.tableArn}/index/${name}`),
  });
}

/**
 * Allows `sqs:SendMessage` (which also authorises SendMessageBatch) on the queue and nothing else — not the
 * GetQueueAttributes and GetQueueUrl that `queue.grantSendMessages` adds, which a sender that knows the queue's
 * URL never calls. A queue under a customer-managed key needs the key grant besides.
 */
export function grantSendMessage(queue: sqs.IQueue, grantee: iam.IGrantable): iam.Grant {
  return iam.Grant.addToPrincipal({ grantee, actions: ['sqs:SendMessage'], resourceArns: [queue.queueArn] });
}

/**
 * An event source mapping's on-failure destination on an SQS queue that grants the function's role what Lambda
 * uses to deliver there — `sqs:SendMessage` — rather than `SqsDlq`'s full `grantSendMessages`.
 */
export function queueFailureDestination(queue: sqs.IQueue): lambda.IEventSourceDlq {
  return {
    bind: (_target, targetHandler) => {
      grantSendMessage(queue, targetHandler);
      return { destination: queue.queueArn };
    },
  };
}

/**
 * Allows `actions` on the table's items whose partition key starts with `keyPrefix` only (`dynamodb:LeadingKeys`),
 * e.g. an erase's delete of a consumer's parked rows, never of its dedupe rows.
 */
export function grantOnItemsStartingWith(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  options: { readonly actions: readonly string[]; readonly keyPrefix: string },
): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: [...options.actions],
    resourceArns: [table.tableArn],
    conditions: { 'ForAllValues:StringLike': { 'dynamodb:LeadingKeys': [`${options.keyPrefix}*`] } },
  });
}

/** What an update granted with {@link grantLimitedUpdate} may name and ask back. */
export interface UpdateLimits {
  /** Every top-level attribute the update may name, its key attributes included (IAM requires them). */
  readonly attributes: readonly string[];
  /** The `ReturnValues` the update may ask for (`NONE` when it leaves the parameter out). */
  readonly returnValues: readonly string[];
}

/**
 * Allows `dynamodb:UpdateItem` on the table's items only when the request names no attribute outside
 * `limits.attributes` (`dynamodb:Attributes`) and asks for one of `limits.returnValues` back, so a grantee
 * that only confirms a message cannot rewrite its payload or read items back through the update.
 */
export function grantLimitedUpdate(
  table: dynamodb.ITable,
  grantee: iam.IGrantable,
  limits: UpdateLimits,
): iam.Grant {
  return iam.Grant.addToPrincipal({
    grantee,
    actions: ['dynamodb:UpdateItem'],
    resourceArns: [table.tableArn],
    conditions: {
      'ForAllValues:StringEquals': { 'dynamodb:Attributes': [...limits.attributes] },
      // Absent when the request leaves ReturnValues out.
      StringEqualsIfExists: { 'dynamodb:ReturnValues': [...limits.returnValues] },
    },
  });
}

/** Settings of a {@link queueEventSource}. */
export interface QueueEventSourceOptions {
  /** Messages per invocation. */
  readonly batchSize: number;
  /** @default - none (Lambda refuses one on a FIFO queue) */
  readonly maxBatchingWindow?: Duration;
}

/**
 * An SQS event source with partial batch responses that grants what Lambda's poller uses — receive, delete,
 * change visibility and read the queue's attributes — and not the GetQueueUrl that `SqsEventSource` adds.
 */
export function queueEventSource(queue: sqs.IQueue, options: QueueEventSourceOptions): lambda.IEventSource {
  return {
    bind: (target) => {
      // The id SqsEventSource gives its mapping, so the mapping keeps its logical id.
      target.addEventSourceMapping(`SqsEventSource:${Names.nodeUniqueId(queue.node)}`, {
        eventSourceArn: queue.queueArn,
        batchSize: options.batchSize,
        ...(options.maxBatchingWindow === undefined ? {} : { maxBatchingWindow: options.maxBatchingWindow }),
        // A failed message is retried alone; the rest of the batch is deleted.
        reportBatchItemFailures: true,
      });
      iam.Grant.addToPrincipal({
        grantee: target,
        actions: [
          'sqs:ReceiveMessage',
          'sqs:DeleteMessage',
          'sqs:ChangeMessageVisibility',
          'sqs:GetQueueAttributes',
        ],
        resourceArns: [queue.queueArn],
      });
    },
  };
}
