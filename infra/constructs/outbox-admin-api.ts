import { Duration, Lazy, Stack } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as iam from 'aws-cdk-lib/aws-iam';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { PARKED_KEY_PREFIX } from '../../shared/aws/inbox-table.ts';
import { OUTBOX_KEYS } from '../../shared/aws/outbox-table.ts';
import { ADMIN_SETTINGS } from '../../shared/settings/outbox-settings.ts';
import { settingsEnvironment } from './function-settings.ts';
import { grantKeyUse } from './key-grants.ts';
import type { OutboxClaimCheck } from './outbox-claim-check.ts';
import { OutboxFunction } from './outbox-function.ts';
import type { OutboxScope } from './outbox-scope.ts';
import { SHIPPED_ENTRIES } from './shipped-entries.ts';
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

/** A topic queue with its dead-letter queue, as the admin redrives between them. */
export interface AdminQueue {
  readonly queue: sqs.IQueue;
  readonly deadLetterQueue: sqs.IQueue;
}

/** What an {@link OutboxAdmin} is built from: the API its routes go on and the outbox's resources. */
export interface OutboxAdminOptions extends OutboxAdminApiProps {
  /** The REST API the routes go on. */
  readonly api: apigateway.IRestApi;
  /** The admin handler's module. @default the shipped admin handler */
  readonly entry?: string;
  readonly outboxTable: dynamodb.ITable;
  readonly auditTable: dynamodb.ITable;
  /** Each topic queue with its dead-letter queue, by the topics routed to it. */
  readonly queues: readonly (AdminQueue & { readonly topics: readonly string[] })[];
  /**
   * Topic → the inbox table of its consumer, for an erase (DELIVERY_INBOXES); read at synth, when every consumer
   * has been added.
   */
  readonly deliveryInboxes: () => Readonly<Record<string, string>>;
}

/** What {@link OutboxAdmin.complete} grants: what depends on the consumers and the claim check. */
export interface OutboxAdminCompletion {
  /**
   * The inbox tables of the consumers of ordered topics, whose cursors an operator's skip of an ordering gap moves
   * and whose parked rows of an erased message an erase deletes. Any table here also gives the admin a Query on
   * the outbox's byOrderKey index, where the skip finds the message.
   */
  readonly orderedInboxTables: readonly dynamodb.ITable[];
  /** The claim check whose payloads an erase deletes with their messages. */
  readonly claimCheck: OutboxClaimCheck | undefined;
  /**
   * Whether the outbox has subscribers: an erase or a skip then reaches each of them as a message of the outbox's
   * own (`outbox.erase`, `outbox.skip`), which the admin puts in the outbox as a delivery row.
   */
  readonly subscribers: boolean;
  /** Whether an ordered topic has subscribers: a skip finds a subscriber's delivery by its place in the sequence. */
  readonly orderedSubscribers: boolean;
}

/** The admin API, as an {@link OutboxAdmin} built it. */
export interface OutboxAdminApi {
  /** The function behind every admin route. */
  readonly function: OutboxFunction;
  /** `/admin`, with `{proxy+}` below it. */
  readonly resource: apigateway.IResource;
  /** GET and POST on `/admin/{proxy+}`, both AWS_IAM-authorised. */
  readonly methods: readonly apigateway.Method[];
}

/**
 * The admin function (`Admin`, in the outbox) and its routes on `options.api`: GET and POST on
 * `/admin/{proxy+}`, AWS_IAM-authorised — a caller needs `execute-api:Invoke` on them, and the audit trail
 * names the caller's ARN. The function may read and change the outbox through its table and indexes, write the
 * audit trail and the redrive journal, move dead letters back to their topic queues (receive/send/delete or an
 * SQS message move task), delete inbox rows for an erase and move the consumers' cursors of an ordered sequence
 * for a skip; nothing else. What depends on the consumers is granted by {@link OutboxAdmin.complete}, once all
 * of them are known, so the admin API may be added before or after them.
 */
export class OutboxAdmin {
  /** The function, its resource and its methods. */
  public readonly api: OutboxAdminApi;

  readonly #outbox: OutboxScope;
  readonly #outboxTable: dynamodb.ITable;
  #completed = false;

  constructor(outbox: OutboxScope, options: OutboxAdminOptions) {
    this.#outbox = outbox;
    this.#outboxTable = options.outboxTable;
    const { scope } = outbox;
    const topicUrls = (pick: (queue: AdminQueue) => sqs.IQueue) =>
      Stack.of(scope).toJsonString(
        Object.fromEntries(
          options.queues.flatMap((queue) => queue.topics.map((topic) => [topic, pick(queue).queueUrl])),
        ),
      );
    const fn = new OutboxFunction(scope, 'Admin', {
      timeout: ADMIN_DEFAULTS.timeout,
      memorySize: ADMIN_DEFAULTS.memorySize,
      logGroupRemovalPolicy: outbox.removalPolicy,
      description: 'Outbox admin API: list, show, replay, cancel, redrive, stats, erase and skip, audited',
      ...options.functionProps,
      entry: options.entry ?? SHIPPED_ENTRIES.admin,
      handler: 'handler',
      serviceName: 'outbox-admin',
      metricsNamespace: outbox.metricsNamespace,
      environment: {
        ...options.functionProps?.environment,
        ...settingsEnvironment(
          ADMIN_SETTINGS,
          {
            outboxTable: outbox.settings.outboxTable,
            auditTable: { value: options.auditTable.tableName, prop: 'auditTableProps' },
            topicQueues: { text: topicUrls((queue) => queue.queue) },
            deadLetterQueues: { text: topicUrls((queue) => queue.deadLetterQueue) },
            deliveryInboxes: {
              text: Lazy.string({ produce: () => Stack.of(scope).toJsonString(options.deliveryInboxes()) }),
            },
            dueShards: outbox.settings.dueShards,
            retentionDays: outbox.settings.retentionDays,
            // To skip a gap: the scope of an order key's topics.
            orderedTopics: outbox.settings.orderedTopics,
            // To find a message's deliveries: each subscriber of its topic.
            subscriptions: outbox.settings.subscriptions,
          },
          outbox.report,
        ),
      },
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

    const admin =
      options.api.root.getResource(ADMIN_DEFAULTS.pathPart) ??
      options.api.root.addResource(ADMIN_DEFAULTS.pathPart);
    const proxy = admin.addResource('{proxy+}');
    const integration = new apigateway.LambdaIntegration(fn);
    // Never open: every admin method is IAM-authorised, whatever the API's default method options say.
    const methods = (['GET', 'POST'] as const).map((method) =>
      proxy.addMethod(method, integration, { authorizationType: apigateway.AuthorizationType.IAM }),
    );
    this.api = { function: fn, resource: admin, methods };
  }

  /**
   * Grants what depends on the consumers and the claim check, once: called when the app is synthesized, so the
   * grants (and their order in the admin's policy) are the same whichever of `addAdminApi` and `addConsumer`
   * came first.
   */
  complete(completion: OutboxAdminCompletion): void {
    if (this.#completed) return;
    this.#completed = true;
    const fn = this.api.function;
    // A skip of an ordering gap finds the message by its place in the sequence, reads each consumer's cursor of
    // the order key and moves it with a conditional update (in the transaction that cancels the message). An
    // erase deletes an erased message's parked row (which holds its payload), and only parked rows: never an
    // inbox row or a cursor, which keep a copy still in a queue from being applied twice.
    const ordered = completion.orderedInboxTables;
    if (ordered.length > 0 || completion.orderedSubscribers) {
      grantQueryOnIndexes(this.#outboxTable, fn, [OUTBOX_KEYS.orderIndex.name]);
    }
    // A subscriber's inbox is its own: an erase or a skip is put in the outbox as a message to it.
    if (completion.subscribers) grantOnTable(this.#outboxTable, fn, ['dynamodb:PutItem']);
    for (const inbox of ordered) {
      grantOnTable(inbox, fn, ['dynamodb:GetItem', 'dynamodb:UpdateItem']);
      grantOnItemsStartingWith(inbox, fn, { actions: ['dynamodb:DeleteItem'], keyPrefix: PARKED_KEY_PREFIX });
    }
    // An erase deletes the aggregate's claim-checked payloads with its messages.
    completion.claimCheck?.bindEraser(fn);
    grantKeyUse(this.#outbox.encryptionKey, fn, 'write');
  }
}
