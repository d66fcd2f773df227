import { Duration, type RemovalPolicy } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { PARKED_KEY_PREFIX } from '../../shared/consumer/order-cursor.ts';
import { OUTBOX_KEYS } from '../../shared/outbox/outbox-item.ts';
import { grantKeyUse } from './key-grants.ts';
import { OutboxFunction } from './outbox-function.ts';
import { grantOnItemsStartingWith, grantOnTable, grantQueryOnIndexes } from './table-grants.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';

/** Settings of the admin function. */
export const ADMIN_DEFAULTS = {
  // API Gateway answers a REST request within 29 s at most; work that takes longer (a slow bulk replay or
  // redrive) belongs to the `outbox` CLI, which runs it without that limit.
  timeout: Duration.seconds(29),
  memorySize: 512,
  /** The resource under the API's root that holds the admin routes. */
  pathPart: 'admin',
} as const;

/** Props of {@link TransactionalOutbox.addAdminApi}. */
export interface OutboxAdminApiProps {
  /**
   * Props merged over the admin function's defaults (Node 24, ARM64, 29 s, 512 MB, the shipped handler).
   * @default - the defaults
   */
  readonly functionProps?: Partial<nodejs.NodejsFunctionProps>;
}

/** What {@link addOutboxAdminApi} builds from: the outbox's resources and the admin's settings, as text. */
export interface OutboxAdminApiOptions extends OutboxAdminApiProps {
  /** The REST API the routes go on. */
  readonly api: apigateway.IRestApi;
  /** The admin handler's module. */
  readonly entry: string;
  readonly outboxTable: dynamodb.ITable;
  readonly auditTable: dynamodb.ITable;
  /** Each topic queue with its dead-letter queue. */
  readonly queues: readonly { readonly queue: sqs.IQueue; readonly deadLetterQueue: sqs.IQueue }[];
  /**
   * The inbox tables of the consumers of ordered topics, whose cursors an operator's skip of an ordering gap moves
   * and whose parked rows of an erased message an erase deletes. Any table here also gives the admin a Query on the
   * outbox's byOrderKey index, where the skip finds the message.
   * @default - none: no topic is ordered
   */
  readonly orderedInboxTables?: readonly dynamodb.ITable[];
  /** Every variable of `ADMIN_SETTINGS`, written by the outbox from the settings contract. */
  readonly environment: Readonly<Record<string, string>>;
  readonly metricsNamespace: string;
  readonly removalPolicy?: RemovalPolicy;
}

/** The admin API, as {@link addOutboxAdminApi} built it. */
export interface OutboxAdminApi {
  /** The function behind every admin route. */
  readonly function: OutboxFunction;
  /** `/admin`, with `{proxy+}` below it. */
  readonly resource: apigateway.IResource;
  /** GET and POST on `/admin/{proxy+}`, both AWS_IAM-authorised. */
  readonly methods: readonly apigateway.Method[];
}

/**
 * Adds the admin function (`Admin`) to `scope` and its routes to `options.api`: GET and POST on
 * `/admin/{proxy+}`, AWS_IAM-authorised — a caller needs `execute-api:Invoke` on them, and the audit trail
 * names the caller's ARN. The function may read and change the outbox through its table and indexes, write the
 * audit trail and the redrive journal, move dead letters back to their topic queues (receive/send/delete or an
 * SQS message move task), delete inbox rows for an erase and move the consumers' cursors of an ordered sequence
 * for a skip; nothing else.
 */
export function addOutboxAdminApi(scope: Construct, options: OutboxAdminApiOptions): OutboxAdminApi {
  const fn = new OutboxFunction(scope, 'Admin', {
    timeout: ADMIN_DEFAULTS.timeout,
    memorySize: ADMIN_DEFAULTS.memorySize,
    logGroupRemovalPolicy: options.removalPolicy,
    description: 'Outbox admin API: list, show, replay, cancel, redrive, stats, erase and skip, audited',
    ...options.functionProps,
    entry: options.entry,
    handler: 'handler',
    serviceName: 'outbox-admin',
    metricsNamespace: options.metricsNamespace,
    environment: { ...options.functionProps?.environment, ...options.environment },
  });
  markOutboxRole(fn, OutboxResourceRole.ADMIN);

  // Reads messages by key and through every index (never a Scan); replays and cancels with conditional
  // updates; an erase deletes the aggregate's messages.
  grantOnTable(options.outboxTable, fn, ['dynamodb:GetItem', 'dynamodb:UpdateItem', 'dynamodb:DeleteItem']);
  grantQueryOnIndexes(options.outboxTable, fn, [
    OUTBOX_KEYS.dueIndex.name,
    OUTBOX_KEYS.aggregateIndex.name,
    OUTBOX_KEYS.attentionIndex.name,
  ]);
  // Audit rows (written with the message update in one transaction) and the redrive journal.
  grantOnTable(options.auditTable, fn, [
    'dynamodb:GetItem',
    'dynamodb:PutItem',
    'dynamodb:UpdateItem',
    'dynamodb:Query',
  ]);
  for (const { queue, deadLetterQueue } of options.queues) {
    // Redrive by receive/send/delete (held messages are released by changing their visibility), depths for
    // the stats, and SQS's own move task, which needs the same rights on both queues.
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: [
        'sqs:ReceiveMessage',
        'sqs:DeleteMessage',
        'sqs:ChangeMessageVisibility',
        'sqs:GetQueueAttributes',
        'sqs:StartMessageMoveTask',
      ],
      resourceArns: [deadLetterQueue.queueArn],
    });
    iam.Grant.addToPrincipal({
      grantee: fn,
      actions: ['sqs:SendMessage', 'sqs:GetQueueAttributes'],
      resourceArns: [queue.queueArn],
    });
    grantKeyUse(deadLetterQueue.encryptionMasterKey, fn, 'read');
    grantKeyUse(queue.encryptionMasterKey, fn, 'write');
  }
  // A skip of an ordering gap finds the message by its place in the sequence, reads each consumer's cursor of the
  // order key and moves it with a conditional update (in the transaction that cancels the message). An erase
  // deletes an erased message's parked row (which holds its payload), and only parked rows: never an inbox row
  // or a cursor, which keep a copy still in a queue from being applied twice.
  const ordered = options.orderedInboxTables ?? [];
  if (ordered.length > 0) grantQueryOnIndexes(options.outboxTable, fn, [OUTBOX_KEYS.orderIndex.name]);
  for (const inbox of ordered) {
    grantOnTable(inbox, fn, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
    grantOnItemsStartingWith(inbox, fn, { actions: ['dynamodb:DeleteItem'], keyPrefix: PARKED_KEY_PREFIX });
  }

  const admin =
    options.api.root.getResource(ADMIN_DEFAULTS.pathPart) ??
    options.api.root.addResource(ADMIN_DEFAULTS.pathPart);
  const proxy = admin.addResource('{proxy+}');
  const integration = new apigateway.LambdaIntegration(fn);
  // Never open: every admin method is IAM-authorised, whatever the API's default method options say.
  const methods = (['GET', 'POST'] as const).map((method) =>
    proxy.addMethod(method, integration, { authorizationType: apigateway.AuthorizationType.IAM }),
  );
  return { function: fn, resource: admin, methods };
}
