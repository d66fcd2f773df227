import type { AttributeValue as SdkAttributeValue } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { marshall } from '@aws-sdk/util-dynamodb';
import type { AttributeValue, DynamoDBRecord, SQSEvent } from 'aws-lambda';
import { planInventory } from '../../../functions/inventory/apply-order/plan-inventory.ts';
import { createOrder } from '../../../functions/orders/create-order/create-order.ts';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../../functions/orders/order.ts';
import { DynamoOutboxStore, type OrderingByTopic } from '../../../shared/index.ts';
import { consumeSqsEvent, relayStreamEvent } from '../../../shared/lambda/index.ts';
import {
  DEFAULT_GAP_TIMEOUT_MS,
  DEFAULT_RETRY_POLICY,
  INBOX_KEYS,
  MemoryDocumentClient,
  MemoryQueues,
  type MemoryTableSchema,
  type MessagePublisher,
  OUTBOX_KEYS,
  type RelayDeps,
  SEQUENCE_KEYS,
} from '../../../shared/memory/index.ts';
import { CONSUMER_DEFAULTS, OUTBOX_STREAM_DEFAULTS } from '../../constructs/index.ts';
import { toProxyEvent } from '../local/api/api-gateway-event.ts';
import { lambdaContext } from '../local/host/lambda-context.ts';

/** The queue of the example's `order.created` messages in the bench's in-memory SQS. */
export const ORDER_QUEUE = 'memory://orderEvents';

/**
 * The example's tables as the stack creates them, with the outbox's indexes projected as the construct projects
 * them (so an index write costs what it costs on AWS).
 */
export const EXAMPLE_TABLES: Readonly<Record<string, MemoryTableSchema>> = {
  orders: { partitionKey: 'orderId' },
  inventory: { partitionKey: 'sku' },
  inbox: { partitionKey: INBOX_KEYS.partitionKey },
  outbox: {
    partitionKey: OUTBOX_KEYS.partitionKey,
    globalIndexes: [
      OUTBOX_KEYS.dueIndex,
      OUTBOX_KEYS.aggregateIndex,
      OUTBOX_KEYS.attentionIndex,
      OUTBOX_KEYS.orderIndex,
    ].map((index) => ({
      name: index.name,
      partitionKey: index.partitionKey,
      sortKey: index.sortKey,
      projection: index.projection,
    })),
  },
  sequences: { partitionKey: SEQUENCE_KEYS.partitionKey },
};

/** The example's ordering: both order topics in one sequence per order, as the example stack configures them. */
export const EXAMPLE_ORDERING: OrderingByTopic = {
  [ORDER_CREATED]: { scope: 'order', gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS, sequence: 'aggregate-version' },
  [ORDER_CANCELLED]: { scope: 'order', gapTimeoutMs: DEFAULT_GAP_TIMEOUT_MS, sequence: 'aggregate-version' },
};

/** How the bench's example wraps its clients: a capacity meter, simulated latency, or both. */
export interface PipelineWrapping {
  /** The Document client each function uses (actor: `orders`, `relay`, `consumer`, `sweeper`). */
  readonly client?: (client: DynamoDBDocumentClient, actor: string) => DynamoDBDocumentClient;
  /** The publisher the relay and the sweeper send through. */
  readonly publisher?: (publisher: MessagePublisher) => MessagePublisher;
  /** The writer's ordering of topics. @default - none: every topic unordered */
  readonly ordering?: OrderingByTopic;
}

/** One SQS request the example's functions or their event source mappings made. */
export interface SqsRequestCounts {
  sendMessageBatch: number;
  receiveMessage: number;
  deleteMessageBatch: number;
}

/**
 * The example order and inventory services on in-memory tables and queues, run hop by hop with the production
 * cores: createOrder (the POST handler's core), relayStreamEvent over the outbox's INSERT records in batches as
 * the stream mapping takes them, and consumeSqsEvent with the inventory's plan in batches of the consumer
 * mapping's size; each hop's SQS requests are counted as the mapping would make them.
 */
export class ExamplePipeline {
  readonly memory: MemoryDocumentClient;
  readonly queues: MemoryQueues;
  readonly sqs: SqsRequestCounts = { sendMessageBatch: 0, receiveMessage: 0, deleteMessageBatch: 0 };
  readonly #stream: DynamoDBRecord[] = [];
  readonly #wrapping: PipelineWrapping;
  readonly #clock = () => new Date();
  #sequence = 0;
  #orders = 0;

  constructor(wrapping: PipelineWrapping = {}, memory = new MemoryDocumentClient(EXAMPLE_TABLES)) {
    this.memory = memory;
    this.#wrapping = wrapping;
    this.queues = new MemoryQueues({ [ORDER_QUEUE]: { visibilityTimeoutMs: 180_000 } }, this.#clock);
    memory.onChange((change) => {
      if (change.tableName !== 'outbox' || change.eventName !== 'INSERT' || !change.newImage) return;
      this.#sequence += 1;
      this.#stream.push(streamRecord(change.newImage, this.#sequence));
    });
  }

  /** The client `actor` uses, wrapped as the bench asks. */
  client(actor: string): DynamoDBDocumentClient {
    const base = this.memory.asDocumentClient();
    return this.#wrapping.client ? this.#wrapping.client(base, actor) : base;
  }

  /** The outbox store as `actor`'s function builds it. */
  store(actor: string): DynamoOutboxStore {
    return new DynamoOutboxStore({ client: this.client(actor), tableName: 'outbox', actor });
  }

  /** The relay's (and the sweeper's) adapters. */
  relayDeps(actor = 'relay'): RelayDeps {
    const counted: MessagePublisher = {
      publishBatch: (queueUrl, messages, options) => {
        this.sqs.sendMessageBatch += 1;
        return this.queues.publishBatch(queueUrl, messages, options);
      },
    };
    return {
      publisher: this.#wrapping.publisher ? this.#wrapping.publisher(counted) : counted,
      store: this.store(actor),
      queueFor: (topic) => (topic === ORDER_CREATED || topic === ORDER_CANCELLED ? ORDER_QUEUE : undefined),
      retryPolicyFor: () => DEFAULT_RETRY_POLICY,
      clock: this.#clock,
      random: Math.random,
    };
  }

  /** Stocks `skus` with `available` units each. */
  async stock(skus: readonly string[], available: number): Promise<void> {
    for (const sku of skus) {
      await this.memory.send(new PutCommand({ TableName: 'inventory', Item: { sku, available } }));
    }
  }

  /** POSTs one order through the create-order core; returns its id (throws unless it answered 201). */
  async placeOrder(lines: readonly { readonly sku: string; readonly quantity: number }[]): Promise<string> {
    this.#orders += 1;
    const orderId = `order-${String(this.#orders).padStart(7, '0')}`;
    const body = JSON.stringify({ orderId, customerId: `customer-${this.#orders % 97}`, items: lines });
    const response = await createOrder(postOrderEvent(body), {
      writer: {
        client: this.client('orders'),
        outboxTable: 'outbox',
        sequenceTable: 'sequences',
        ...(this.#wrapping.ordering === undefined ? {} : { ordering: this.#wrapping.ordering }),
      },
      ordersTable: 'orders',
      clock: this.#clock,
      newOrderId: () => orderId,
    });
    if (response.statusCode !== 201)
      throw new Error(`order not created: ${response.statusCode} ${response.body}`);
    return orderId;
  }

  /** Stream records not yet relayed. */
  get streamBacklog(): number {
    return this.#stream.length;
  }

  /** Relays every stream record, in batches of the stream mapping's size. Returns the messages sent. */
  async relayAll(deps: RelayDeps = this.relayDeps()): Promise<number> {
    let sent = 0;
    const quiet = { info: () => {}, warn: () => {} };
    while (this.#stream.length > 0) {
      const batch = this.#stream.splice(0, OUTBOX_STREAM_DEFAULTS.batchSize);
      const { report } = await relayStreamEvent({ Records: batch }, deps, quiet);
      sent += report.sent;
    }
    return sent;
  }

  /** Drops the stream records (a relay outage long enough for the mapping to give up on them). */
  loseStream(): number {
    return this.#stream.splice(0).length;
  }

  /**
   * Consumes every visible message in batches of the consumer mapping's size, counting the ReceiveMessage and
   * DeleteMessageBatch calls the mapping makes for them. Returns the messages applied or rejected.
   */
  async consumeAll(): Promise<number> {
    const consumer = {
      plan: planInventory('inventory', this.#clock),
      deps: {
        client: this.client('consumer'),
        inboxTable: 'inbox',
        confirmer: this.store('consumer'),
        clock: this.#clock,
      },
      logger: { info: () => {}, warn: () => {} },
    };
    let consumed = 0;
    for (;;) {
      this.sqs.receiveMessage += 1;
      const records = this.queues.receive(ORDER_QUEUE, CONSUMER_DEFAULTS.batchSize);
      if (records.length === 0) return consumed;
      const event: SQSEvent = { Records: records };
      const { response } = await consumeSqsEvent(event, context(), consumer);
      const failed = new Set(response.batchItemFailures.map((failure) => failure.itemIdentifier));
      const done = records.filter((record) => !failed.has(record.messageId));
      if (done.length > 0) this.sqs.deleteMessageBatch += 1;
      for (const record of done) this.queues.delete(ORDER_QUEUE, record.receiptHandle);
      consumed += done.length;
    }
  }
}

function context() {
  const now = Date.now();
  return lambdaContext({
    functionName: 'inventoryConsumer',
    memoryMb: CONSUMER_DEFAULTS.memorySize,
    timeoutSeconds: CONSUMER_DEFAULTS.timeout.toSeconds(),
    requestId: `bench-${now}`,
    startedAt: now,
    now: () => Date.now(),
  });
}

/** The INSERT record the outbox's stream delivers for a new item. */
export function streamRecord(image: Record<string, unknown>, sequence: number): DynamoDBRecord {
  const newImage = marshall(image, { removeUndefinedValues: true }) as Record<string, SdkAttributeValue>;
  return {
    eventID: `bench-${sequence}`,
    eventName: 'INSERT',
    eventSource: 'aws:dynamodb',
    eventVersion: '1.1',
    awsRegion: 'memory',
    dynamodb: {
      ApproximateCreationDateTime: Math.floor(Date.now() / 1000),
      Keys: { messageId: { S: String(image.messageId) } },
      NewImage: newImage as Record<string, AttributeValue>,
      SequenceNumber: String(sequence).padStart(21, '0'),
      SizeBytes: 1,
      StreamViewType: 'NEW_AND_OLD_IMAGES',
    },
    eventSourceARN: 'arn:aws:dynamodb:memory:000000000000:table/outbox/stream/memory',
  };
}

/** The API Gateway event of `POST /orders` with `body`, as the example's API hands it to its function. */
export function postOrderEvent(body: string) {
  return toProxyEvent(
    {
      method: 'POST',
      path: '/orders',
      query: '',
      rawHeaders: ['content-type', 'application/json'],
      body: Buffer.from(body),
      sourceIp: '127.0.0.1',
    },
    {
      resource: '/orders',
      pathParameters: {},
      requestId: 'bench',
      stage: 'bench',
      accountId: '000000000000',
      apiId: 'bench',
      domainName: 'localhost',
      now: new Date(),
    },
  );
}
