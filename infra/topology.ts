/**
 * The one description of the example application: tables, queues, functions, event sources and routes.
 * The CDK stack builds AWS resources from it and the local runtime runs the same handlers against an
 * emulator from it, so a local run cannot drift from what `cdk deploy` creates (STYLE §3).
 */
import { DEFAULT_DUE_SHARDS, OUTBOX_KEYS } from '../shared/outbox/outbox-item.ts';
import { DEFAULT_CONFIRM_DEADLINE_MS } from '../shared/outbox/outbox-store.ts';
import { DEFAULT_RETRY_POLICY, type RetryPolicy } from '../shared/retry/retry-policy.ts';

/** A DynamoDB table. */
export interface TableSpec {
  readonly partitionKey: string;
  /** Streams NEW_AND_OLD_IMAGES when set. */
  readonly stream?: boolean;
  /** TTL attribute (epoch seconds). */
  readonly ttlAttribute?: string;
  readonly globalIndexes?: readonly { name: string; partitionKey: string; sortKey: string }[];
}

/** An SQS queue with its dead-letter queue. */
export interface QueueSpec {
  /** Topics whose messages the relay routes to this queue. */
  readonly topics: readonly string[];
  /** Receives before SQS moves a message to the DLQ. */
  readonly maxReceiveCount: number;
}

/** Where an environment variable's value comes from. */
export type EnvValue =
  | { readonly tableName: TableKey }
  | { readonly queueUrl: QueueKey }
  | { readonly deadLetterQueueUrl: QueueKey }
  /** JSON object mapping topics to table names (e.g. the inbox that proves a topic's delivery). */
  | { readonly tableNamesByTopic: Readonly<Record<string, TableKey>> }
  /** JSON object mapping each topic to its queue URL. */
  | { readonly topicRoutes: true }
  | { readonly literal: string };

/**
 * What a function may do to a table (least privilege: each function gets only what it uses); the actions of
 * each level are in infra/constructs/table-access.ts.
 * - `read`: get, query and scan items; no writes.
 * - `write`: put, update and delete items (TransactWriteItems included); no reads.
 * - `readWrite`: both.
 * - `update`: update existing items only (UpdateItem, also inside TransactWriteItems); no put, delete or read.
 * - `queryUpdate`: query the table and its indexes and update the items found; no scan, get, put or delete.
 */
export type TableAccess = 'read' | 'write' | 'readWrite' | 'update' | 'queryUpdate';

/** A DynamoDB stream → Lambda mapping (DESIGN §4, relay row). */
export interface StreamSourceSpec {
  readonly table: TableKey;
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
  /** Retries of a failing batch before it goes to the on-failure destination. */
  readonly retryAttempts: number;
  readonly maxRecordAgeSeconds: number;
  readonly bisectBatchOnError: boolean;
  readonly parallelizationFactor: number;
  /** EventBridge-style filter patterns; a record passes when any matches. */
  readonly filters: readonly Record<string, unknown>[];
  /** Queue that receives metadata of batches that exhausted their retries. */
  readonly onFailureQueue: QueueKey;
}

/** An SQS → Lambda mapping. */
export interface QueueSourceSpec {
  readonly queue: QueueKey;
  readonly batchSize: number;
  readonly maxBatchingWindowSeconds: number;
}

/** A Lambda function. */
export interface FunctionSpec {
  /** Handler module, relative to the repository root; it exports `handler`. */
  readonly entry: string;
  readonly description: string;
  readonly timeoutSeconds: number;
  readonly memoryMb: number;
  readonly environment: Readonly<Record<string, EnvValue>>;
  readonly tables: Readonly<Partial<Record<TableKey, TableAccess>>>;
  /** Queues the function sends to. */
  readonly sendsTo?: readonly QueueKey[];
  /** Queues whose dead-letter queue the function sends to (a consumer dead-lettering with a reason). */
  readonly sendsToDeadLetter?: readonly QueueKey[];
  /** Invoked on a schedule (an EventBridge rule in AWS, a timer locally). */
  readonly schedule?: { readonly rateMinutes: number };
  readonly streamSource?: StreamSourceSpec;
  readonly queueSource?: QueueSourceSpec;
}

/** An API Gateway route to a function (proxy integration). */
export interface RouteSpec {
  readonly method: 'GET' | 'POST' | 'PUT';
  /** API Gateway path, e.g. `/orders/{orderId}`. */
  readonly path: string;
  readonly function: FunctionKey;
  /** Whether API Gateway validates the body against the function's request model (POST/PUT). */
  readonly validateBody?: boolean;
}

/** Per topic: how sends are retried and where delivery can be checked (DESIGN §4, retry and sweep rows). */
export interface TopicSpec {
  readonly retry: RetryPolicy;
  /** The table whose row, keyed by message id, proves the downstream applied a message (its inbox). */
  readonly deliveryInbox?: TableKey;
}

const topics = {
  'order.created': { retry: DEFAULT_RETRY_POLICY, deliveryInbox: 'inbox' },
} as const satisfies Record<string, TopicSpec>;

/** How long a SENT message may go unconfirmed before the sweeper asks the downstream (relay and sweeper agree). */
const CONFIRM_DEADLINE_MS = String(DEFAULT_CONFIRM_DEADLINE_MS);

/** RETRY_POLICIES: each topic's retry policy, as the relay and the sweeper read it. */
const RETRY_POLICIES = JSON.stringify(
  Object.fromEntries(Object.entries(topics).map(([topic, spec]) => [topic, spec.retry])),
);

const tables = {
  orders: { partitionKey: 'orderId' },
  inventory: { partitionKey: 'sku' },
  outbox: {
    partitionKey: OUTBOX_KEYS.partitionKey,
    stream: true,
    ttlAttribute: OUTBOX_KEYS.ttlAttribute,
    globalIndexes: [OUTBOX_KEYS.dueIndex, OUTBOX_KEYS.aggregateIndex],
  },
  inbox: { partitionKey: 'messageId', ttlAttribute: 'expiresAt' },
} as const satisfies Record<string, TableSpec>;

/** Name of a table in the topology. */
export type TableKey = keyof typeof tables;

const queues = {
  orderEvents: { topics: ['order.created'], maxReceiveCount: 5 },
  relayFailures: { topics: [], maxReceiveCount: 5 },
} as const satisfies Record<string, QueueSpec>;

/** Name of a queue in the topology. */
export type QueueKey = keyof typeof queues;

const functions = {
  createOrder: {
    entry: 'functions/orders/create-order/handler.ts',
    description: 'POST /orders: writes the order and its order.created message in one transaction',
    timeoutSeconds: 10,
    memoryMb: 256,
    environment: { ORDERS_TABLE: { tableName: 'orders' }, OUTBOX_TABLE: { tableName: 'outbox' } },
    tables: { orders: 'write', outbox: 'write' },
  },
  getOrder: {
    entry: 'functions/orders/get-order/handler.ts',
    description: 'GET /orders/{orderId}: the order and the delivery status of its messages',
    timeoutSeconds: 10,
    memoryMb: 256,
    environment: { ORDERS_TABLE: { tableName: 'orders' }, OUTBOX_TABLE: { tableName: 'outbox' } },
    tables: { orders: 'read', outbox: 'read' },
  },
  putStock: {
    entry: 'functions/inventory/put-stock/handler.ts',
    description: 'PUT /inventory/{sku}: sets the available stock of a SKU',
    timeoutSeconds: 10,
    memoryMb: 256,
    environment: { INVENTORY_TABLE: { tableName: 'inventory' } },
    tables: { inventory: 'write' },
  },
  getStock: {
    entry: 'functions/inventory/get-stock/handler.ts',
    description: 'GET /inventory/{sku}: the available stock of a SKU',
    timeoutSeconds: 10,
    memoryMb: 256,
    environment: { INVENTORY_TABLE: { tableName: 'inventory' } },
    tables: { inventory: 'read' },
  },
  relay: {
    entry: 'functions/outbox/relay/handler.ts',
    description: 'Outbox stream → SQS: forwards new messages, marks them SENT or records the failure',
    timeoutSeconds: 30,
    memoryMb: 512,
    environment: {
      OUTBOX_TABLE: { tableName: 'outbox' },
      TOPIC_QUEUES: { topicRoutes: true },
      RETRY_POLICIES: { literal: RETRY_POLICIES },
      CONFIRM_DEADLINE_MS: { literal: CONFIRM_DEADLINE_MS },
    },
    // Marks messages SENT or records a failed send: UpdateItem only (shared/outbox/outbox-store.ts).
    tables: { outbox: 'update' },
    sendsTo: ['orderEvents'],
    streamSource: {
      table: 'outbox',
      batchSize: 100,
      maxBatchingWindowSeconds: 1,
      // Bounded: the sweeper delivers whatever the stream gives up on, so retries need not be endless.
      retryAttempts: 10,
      maxRecordAgeSeconds: 3_600,
      bisectBatchOnError: true,
      parallelizationFactor: 1,
      // Only new outbox messages; status updates and TTL deletions are not forwarded.
      filters: [{ eventName: ['INSERT'] }],
      onFailureQueue: 'relayFailures',
    },
  },
  inventoryConsumer: {
    entry: 'functions/inventory/apply-order/handler.ts',
    description: 'order.created → stock: applies each order exactly once through the inbox',
    timeoutSeconds: 30,
    memoryMb: 256,
    environment: {
      INVENTORY_TABLE: { tableName: 'inventory' },
      INBOX_TABLE: { tableName: 'inbox' },
      OUTBOX_TABLE: { tableName: 'outbox' },
      SOURCE_QUEUE_URL: { queueUrl: 'orderEvents' },
      DEAD_LETTER_QUEUE_URL: { deadLetterQueueUrl: 'orderEvents' },
      MAX_RECEIVE_COUNT: { literal: String(queues.orderEvents.maxReceiveCount) },
    },
    // Confirms the message it applied: an UpdateItem on the outbox, nothing more.
    tables: { inventory: 'write', inbox: 'write', outbox: 'update' },
    sendsToDeadLetter: ['orderEvents'],
    queueSource: { queue: 'orderEvents', batchSize: 10, maxBatchingWindowSeconds: 1 },
  },
  sweeper: {
    entry: 'functions/outbox/sweeper/handler.ts',
    description:
      'Every minute: sends due retries and lost stream records, recovers expired claims, reconciles unconfirmed messages',
    // A run keeps working until about 5 s before its timeout, so second-level backoffs are honoured.
    timeoutSeconds: 60,
    memoryMb: 512,
    environment: {
      OUTBOX_TABLE: { tableName: 'outbox' },
      TOPIC_QUEUES: { topicRoutes: true },
      RETRY_POLICIES: { literal: RETRY_POLICIES },
      CONFIRM_DEADLINE_MS: { literal: CONFIRM_DEADLINE_MS },
      DELIVERY_INBOXES: {
        tableNamesByTopic: Object.fromEntries(
          Object.entries(topics).map(([topic, spec]) => [topic, spec.deliveryInbox]),
        ) as Record<string, TableKey>,
      },
    },
    // Queries the due index and claims, requeues, releases and marks messages with UpdateItem; never scans.
    tables: { outbox: 'queryUpdate', inbox: 'read' },
    sendsTo: ['orderEvents'],
    schedule: { rateMinutes: 1 },
  },
} as const satisfies Record<string, FunctionSpec>;

/** Name of a function in the topology. */
export type FunctionKey = keyof typeof functions;

const routes = [
  { method: 'POST', path: '/orders', function: 'createOrder', validateBody: true },
  { method: 'GET', path: '/orders/{orderId}', function: 'getOrder' },
  { method: 'PUT', path: '/inventory/{sku}', function: 'putStock', validateBody: true },
  { method: 'GET', path: '/inventory/{sku}', function: 'getStock' },
] as const satisfies readonly RouteSpec[];

/** The example application's topology. */
export const topology = {
  stackName: 'OutboxExample',
  dueShards: DEFAULT_DUE_SHARDS,
  /** The CONFIRM_DEADLINE_MS the relay and the sweeper share, as a number (the TransactionalOutbox prop). */
  confirmDeadlineMs: Number(CONFIRM_DEADLINE_MS),
  topics: topics as Readonly<Record<string, TopicSpec>>,
  tables: tables as Readonly<Record<TableKey, TableSpec>>,
  queues: queues as Readonly<Record<QueueKey, QueueSpec>>,
  functions: functions as Readonly<Record<FunctionKey, FunctionSpec>>,
  routes: routes as readonly RouteSpec[],
} as const;

/** The CloudFormation output holding a table's physical name. */
export function tableOutputName(key: TableKey): string {
  return `${key}TableName`;
}

/** The CloudFormation output holding a queue's URL. */
export function queueOutputName(key: QueueKey): string {
  return `${key}QueueUrl`;
}

/** The CloudFormation output holding a queue's dead-letter queue URL. */
export function deadLetterQueueOutputName(key: QueueKey): string {
  return `${key}DeadLetterQueueUrl`;
}

/** The visibility timeout a consumer's queue needs: AWS advises 6 × the function timeout. */
export function queueVisibilityTimeoutSeconds(queue: QueueKey): number {
  const consumers = Object.values(topology.functions).filter((f) => f.queueSource?.queue === queue);
  const longest = Math.max(30, ...consumers.map((f) => f.timeoutSeconds));
  return 6 * longest;
}

/** The topic → queue routing table the relay uses. */
export function topicQueues(): ReadonlyMap<string, QueueKey> {
  const routing = new Map<string, QueueKey>();
  for (const [key, queue] of Object.entries(topology.queues) as [QueueKey, QueueSpec][]) {
    for (const topic of queue.topics) routing.set(topic, key);
  }
  return routing;
}
