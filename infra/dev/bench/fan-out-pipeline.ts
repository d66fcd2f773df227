/**
 * The orders service delivering its ordered topics to 1–5 subscribers on the bench's in-memory services, run hop by
 * hop with the shipped cores: the POST core (createOrder) with the writer configured from its environment, the
 * stream relay, each subscriber's consumer (`consumerParts`: inbox keyed per subscriber, receipts on the
 * producer's receipt queue) and the producer's receipts function (`createReceiptsHandler`, over a loopback DynamoDB
 * endpoint since it builds its own client). Two transports:
 *
 * - `sqs`, the built design: a row per delivery (`<messageId>#<subscriber>`), sent by the relay with
 *   SendMessageBatch to each subscriber's queue;
 * - `sns`, the alternative: a row per message carrying a map of its deliveries, published once to an SNS topic that
 *   copies it into every subscriber's queue; the SNS topic, the map and the receipts function that updates the map
 *   are models (see `sns-fan-out-model.ts`), everything else is the same production code.
 *
 * Each hop's SQS and SNS requests and Lambda invocations are counted as the event source mappings would make them;
 * DynamoDB units by a {@link CapacityMeter} when asked; every call can wait a fixed simulated latency.
 */
import { type DynamoDBDocumentClient, PutCommand, ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBRecord, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { createOrder } from '../../../functions/orders/create-order/create-order.ts';
import { ORDER_CANCELLED, ORDER_CREATED } from '../../../functions/orders/order.ts';
import { awsClientConfig, createDocumentClient, type OutboxItem } from '../../../shared/index.ts';
import {
  consumerParts,
  consumeSqsEvent,
  createReceiptsHandler,
  outboxWriterFromEnv,
  relayDeps,
  relayStreamEvent,
  type SqsConsumer,
} from '../../../shared/lambda/index.ts';
import {
  itemSizeBytes,
  MemoryDocumentClient,
  MemoryQueues,
  type RelayDeps,
} from '../../../shared/memory/index.ts';
import { CONSUMER_DEFAULTS, OUTBOX_STREAM_DEFAULTS } from '../../constructs/index.ts';
import { lambdaContext } from '../local/host/lambda-context.ts';
import { CapacityMeter } from './capacity-meter.ts';
import { startDynamoEndpoint } from './dynamo-endpoint.ts';
import { EXAMPLE_ORDERING, postOrderEvent, streamRecord } from './example-pipeline.ts';
import {
  type AppliedOrders,
  appliedOrders,
  businessTableOf,
  fanOutTables,
  inboxTableOf,
  STOCK,
  subscriberConflictKeys,
  subscriberPlan,
} from './fan-out-subscribers.ts';
import { memorySqsClient } from './memory-sqs-client.ts';
import { delayedDocumentClient, pause } from './simulated-latency.ts';
import {
  applySnsReceipts,
  SNS_TOPIC_URL,
  type SnsCounts,
  snsTopicPublisher,
  withDeliveryMaps,
} from './sns-fan-out-model.ts';

/** How the producer gets a message to its subscribers. */
export type FanOutTransport = 'sqs' | 'sns';

/** Simulated latency of one call to each service, in milliseconds. */
export interface FanOutLatency {
  readonly sqsMs: number;
  readonly dynamoMs: number;
  readonly snsMs: number;
}

/** Options of a {@link FanOutPipeline}. */
export interface FanOutPipelineOptions {
  readonly transport: FanOutTransport;
  /** Names of the subscribers of `order.created` and `order.cancelled`, in order. */
  readonly subscribers: readonly string[];
  /** @default no latency */
  readonly latency?: FanOutLatency;
  /** Count DynamoDB capacity units by actor (`orders`, `relay`, `consumer:<name>`, `receipts`). @default false */
  readonly metered?: boolean;
}

/** Requests and invocations a run made, as the functions and their event source mappings would make them. */
export interface FanOutCounts {
  /** Outbox rows the stream delivered to the relay. */
  streamRecords: number;
  /** The relay's SendMessageBatch requests to subscriber queues. */
  relaySends: number;
  /** SNS PublishBatch requests, and the messages SNS put into subscriber queues. */
  readonly sns: SnsCounts;
  /** The consumer mappings' ReceiveMessage and DeleteMessageBatch requests (receives that found messages). */
  subscriberReceives: number;
  subscriberDeletes: number;
  /** Consumers' SendMessageBatch requests to the receipt queue, and the receipts mapping's requests. */
  receiptSends: number;
  receiptReceives: number;
  receiptDeletes: number;
  relayInvocations: number;
  consumerInvocations: number;
  receiptsInvocations: number;
}

/** One timed order: when its POST started and when its last delivery was CONFIRMED, in ms (performance.now). */
export interface OrderTiming {
  readonly messageId: string;
  readonly postedAt: number;
  readonly confirmedAt: number;
}

const ACCOUNT_URL = 'https://sqs.us-east-1.amazonaws.com/000000000000';
/** The queue of `subscriber`'s deliveries. */
export const subscriberQueueOf = (subscriber: string) => `${ACCOUNT_URL}/orders-${subscriber}`;
/** The producer's receipt queue. */
export const RECEIPT_QUEUE = `${ACCOUNT_URL}/orders-receipts`;
/** The receipts mapping, as `OutboxReceipts` configures it: batches of 10. */
const RECEIPTS_BATCH_SIZE = 10;
/** Lambda reads a queue with five concurrent batches to begin with (it scales up from there under load). */
export const QUEUE_MAPPING_CONCURRENCY = 5;
const quiet = { debug: () => {}, info: () => {}, warn: () => {} };

/** Wakes the pollers of one source: a notice while none waits is kept, so an arrival is never missed. */
class Wakeup {
  #pending = false;
  #waiting: (() => void)[] = [];

  notify(): void {
    const waiting = this.#waiting;
    this.#waiting = [];
    if (waiting.length === 0) this.#pending = true;
    for (const resolve of waiting) resolve();
  }

  wait(): Promise<void> {
    if (this.#pending) {
      this.#pending = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => this.#waiting.push(resolve));
  }
}

/** See the module's doc. */
export class FanOutPipeline {
  readonly memory: MemoryDocumentClient;
  readonly queues: MemoryQueues;
  readonly meter: CapacityMeter | undefined;
  readonly counts: FanOutCounts;
  readonly options: FanOutPipelineOptions;
  /** When each message had every delivery CONFIRMED (performance.now), by message id. */
  readonly confirmedAt = new Map<string, number>();
  readonly #latency: FanOutLatency;
  readonly #stream: DynamoDBRecord[] = [];
  readonly #confirmedDeliveries = new Map<string, number>();
  readonly #pendingDeliveries = new Set<Promise<void>>();
  readonly #wakeups = new Map<string, Wakeup>();
  readonly #onConfirmed: (() => void)[] = [];
  #sequence = 0;
  #orders = 0;
  #built: Built | undefined;

  constructor(options: FanOutPipelineOptions) {
    this.options = options;
    this.#latency = options.latency ?? { sqsMs: 0, dynamoMs: 0, snsMs: 0 };
    const tables = fanOutTables(options.subscribers);
    this.memory = new MemoryDocumentClient(tables);
    this.meter = options.metered === true ? new CapacityMeter(this.memory, tables) : undefined;
    const clock = () => new Date();
    this.queues = new MemoryQueues(
      Object.fromEntries(
        [...options.subscribers.map(subscriberQueueOf), RECEIPT_QUEUE].map((url) => [
          url,
          { visibilityTimeoutMs: 180_000 },
        ]),
      ),
      clock,
    );
    this.counts = {
      streamRecords: 0,
      relaySends: 0,
      sns: { publishes: 0, deliveries: 0 },
      subscriberReceives: 0,
      subscriberDeletes: 0,
      receiptSends: 0,
      receiptReceives: 0,
      receiptDeletes: 0,
      relayInvocations: 0,
      consumerInvocations: 0,
      receiptsInvocations: 0,
    };
    for (const url of [...options.subscribers.map(subscriberQueueOf), RECEIPT_QUEUE, 'stream']) {
      this.#wakeups.set(url, new Wakeup());
    }
    this.queues.onMessage((url) => this.#wakeups.get(url)?.notify());
    this.memory.onChange((change) => {
      if (change.tableName !== 'outbox' || change.newImage === undefined) return;
      if (change.eventName === 'INSERT') {
        this.#sequence += 1;
        this.#stream.push(streamRecord(change.newImage, this.#sequence));
        this.#wakeups.get('stream')?.notify();
      } else if (change.newImage.status === 'CONFIRMED' && change.oldImage?.status !== 'CONFIRMED') {
        this.#delivered(change.newImage);
      }
    });
  }

  /** Every DynamoDB client a function of the run uses: counted under `actor` when metered, then delayed. */
  client(actor: string): DynamoDBDocumentClient {
    const base = this.memory.asDocumentClient();
    const counted = this.meter === undefined ? base : this.meter.client(base, actor);
    return this.#latency.dynamoMs > 0
      ? delayedDocumentClient(counted, { latencyMs: this.#latency.dynamoMs })
      : counted;
  }

  /** Builds the functions (and starts the receipts function's endpoint); call once before anything runs. */
  async start(): Promise<void> {
    this.#built = await this.#build();
  }

  /** Stops the endpoint. */
  async stop(): Promise<void> {
    await this.#built?.close();
  }

  /** Stocks `skus` for the inventory subscriber: set-up, so the meter forgets it. */
  async stock(skus: readonly string[]): Promise<void> {
    for (const sku of skus) {
      await this.memory.send(
        new PutCommand({ TableName: businessTableOf('inventory'), Item: { sku, available: STOCK } }),
      );
    }
    this.meter?.reset();
  }

  /** POSTs one single-line order through the create-order core; returns its message id. */
  async placeOrder(sku: string): Promise<string> {
    const built = this.#functions();
    this.#orders += 1;
    const orderId = `order-${String(this.#orders).padStart(7, '0')}`;
    const body = JSON.stringify({
      orderId,
      customerId: `customer-${this.#orders % 97}`,
      items: [{ sku, quantity: 1 }],
    });
    const response = await createOrder(postOrderEvent(body), {
      writer: built.writer,
      ordersTable: 'orders',
      clock: () => new Date(),
      newOrderId: () => orderId,
    });
    if (response.statusCode !== 201) {
      throw new Error(`order not created: ${response.statusCode} ${response.body}`);
    }
    return String((JSON.parse(response.body) as { messageId: string }).messageId);
  }

  /** One relay invocation over the next batch of stream records; returns the records it took. */
  async relayBatch(): Promise<number> {
    const batch = this.#stream.splice(0, OUTBOX_STREAM_DEFAULTS.batchSize);
    if (batch.length === 0) return 0;
    this.counts.relayInvocations += 1;
    this.counts.streamRecords += batch.length;
    const { report } = await relayStreamEvent({ Records: batch }, this.#functions().relay, quiet);
    if (report.sent !== batch.length) {
      throw new Error(`relay sent ${report.sent} of ${batch.length}: ${JSON.stringify(report.problems)}`);
    }
    return batch.length;
  }

  /** One invocation of `subscriber`'s consumer on what its queue holds; returns the records it took. */
  async consumeBatch(subscriber: string): Promise<number> {
    const consumer = this.#functions().consumers.get(subscriber);
    if (consumer === undefined) throw new Error(`no subscriber ${subscriber}`);
    return this.#mapping({
      queueUrl: subscriberQueueOf(subscriber),
      max: CONSUMER_DEFAULTS.batchSize,
      invoke: async (records) => {
        this.counts.subscriberReceives += 1;
        this.counts.consumerInvocations += 1;
        const { response } = await consumeSqsEvent({ Records: records }, context(subscriber), consumer);
        return response;
      },
      deleted: () => {
        this.counts.subscriberDeletes += 1;
      },
    });
  }

  /** One invocation of the receipts function on what the receipt queue holds; returns the records it took. */
  async receiptsBatch(): Promise<number> {
    const receipts = this.#functions().receipts;
    return this.#mapping({
      queueUrl: RECEIPT_QUEUE,
      max: RECEIPTS_BATCH_SIZE,
      invoke: async (records) => {
        this.counts.receiptReceives += 1;
        this.counts.receiptsInvocations += 1;
        return receipts({ Records: records });
      },
      deleted: () => {
        this.counts.receiptDeletes += 1;
      },
    });
  }

  /** Runs every hop until nothing is left to do: each message relayed, applied by each subscriber, confirmed. */
  async drain(): Promise<void> {
    for (;;) {
      let progress = 0;
      for (let taken = await this.relayBatch(); taken > 0; taken = await this.relayBatch()) progress += taken;
      await Promise.all(this.#pendingDeliveries);
      for (const subscriber of this.options.subscribers) {
        for (
          let taken = await this.consumeBatch(subscriber);
          taken > 0;
          taken = await this.consumeBatch(subscriber)
        ) {
          progress += taken;
        }
      }
      for (let taken = await this.receiptsBatch(); taken > 0; taken = await this.receiptsBatch())
        progress += taken;
      if (progress === 0) return;
    }
  }

  /**
   * Places `orders` single-line orders, one every `intervalMs` without waiting for the one before, while each hop
   * polls as its mapping would (woken by an arrival, as a long poll returns); resolves once every message has all
   * its deliveries CONFIRMED, or after `settleMs` past the last POST with what was confirmed by then.
   */
  async runTimed(options: {
    readonly orders: number;
    readonly intervalMs: number;
    readonly settleMs: number;
  }): Promise<OrderTiming[]> {
    const skus = Array.from({ length: options.orders }, (_, n) => `SKU-T${n}`);
    await this.stock(skus);
    let running = true;
    const loop = async (step: () => Promise<number>, wakeup: Wakeup | undefined) => {
      // Checked again after the step and before waiting: a stop while it ran has no waiter left to wake.
      while (running) if ((await step()) === 0 && running) await wakeup?.wait();
    };
    // One shard: the relay's batches go one after another. A queue's mapping runs several batches at once.
    const queuePollers = (step: () => Promise<number>, wakeup: Wakeup | undefined) =>
      Array.from({ length: QUEUE_MAPPING_CONCURRENCY }, () => loop(step, wakeup));
    const pollers = [
      loop(() => this.relayBatch(), this.#wakeups.get('stream')),
      ...this.options.subscribers.flatMap((subscriber) =>
        queuePollers(() => this.consumeBatch(subscriber), this.#wakeups.get(subscriberQueueOf(subscriber))),
      ),
      ...queuePollers(() => this.receiptsBatch(), this.#wakeups.get(RECEIPT_QUEUE)),
    ];
    // Settles only when a poller fails: its error ends the run instead of a stall until `settleMs`.
    const failed = Promise.race(pollers.map((poller) => poller.then(() => new Promise<never>(() => {}))));
    failed.catch(() => {});
    const posted: { messageId: string; postedAt: number }[] = [];
    const started = performance.now();
    const posts: Promise<void>[] = [];
    for (const [index, sku] of skus.entries()) {
      const due = started + index * options.intervalMs;
      if (due > performance.now()) await pause(due - performance.now());
      const postedAt = performance.now();
      posts.push(this.placeOrder(sku).then((messageId) => void posted.push({ messageId, postedAt })));
    }
    let interrupted: { readonly error: unknown } | undefined;
    try {
      await Promise.race([Promise.all(posts), failed]);
      const everyOne = new Promise<void>((resolve) => {
        const check = () => {
          if (posted.every(({ messageId }) => this.confirmedAt.has(messageId))) resolve();
        };
        this.#onConfirmed.push(check);
        check();
      });
      let settled: NodeJS.Timeout | undefined;
      const settle = new Promise<void>((resolve) => {
        settled = setTimeout(resolve, options.settleMs);
      });
      await Promise.race([everyOne, settle, failed]).finally(() => clearTimeout(settled));
    } catch (error) {
      interrupted = { error };
    }
    running = false;
    for (const wakeup of this.#wakeups.values()) wakeup.notify();
    const stopped = await Promise.allSettled(pollers);
    const failure = stopped.find((result) => result.status === 'rejected');
    if (interrupted !== undefined) throw interrupted.error;
    if (failure !== undefined) throw failure.reason;
    return posted.flatMap(({ messageId, postedAt }) => {
      const confirmed = this.confirmedAt.get(messageId);
      return confirmed === undefined ? [] : [{ messageId, postedAt, confirmedAt: confirmed }];
    });
  }

  /** Every item of `tableName`, read page by page. */
  async items(tableName: string): Promise<Record<string, unknown>[]> {
    const items: Record<string, unknown>[] = [];
    let from: Record<string, unknown> | undefined;
    do {
      // A scan answers 1 MB a page, as DynamoDB does.
      const page = await this.memory.send(
        new ScanCommand({ TableName: tableName, ...(from === undefined ? {} : { ExclusiveStartKey: from }) }),
      );
      items.push(...((page.Items ?? []) as Record<string, unknown>[]));
      from = page.LastEvaluatedKey as Record<string, unknown> | undefined;
    } while (from !== undefined);
    return items;
  }

  /** Every row of the outbox, as the writer, the relay and the receipts left it. */
  async outboxRows(): Promise<OutboxItem[]> {
    return (await this.items('outbox')) as unknown as OutboxItem[];
  }

  /** Bytes the outbox and the inboxes keep for the run (what stays until TTL). */
  async retainedBytes(): Promise<number> {
    let bytes = 0;
    for (const table of ['outbox', ...this.options.subscribers.map(inboxTableOf)]) {
      for (const item of await this.items(table)) bytes += itemSizeBytes(item);
    }
    return bytes;
  }

  /** How many orders each subscriber applied, as its business rows show (see {@link appliedOrders}). */
  async applied(): Promise<Record<string, AppliedOrders>> {
    const result: Record<string, AppliedOrders> = {};
    for (const subscriber of this.options.subscribers) {
      result[subscriber] = appliedOrders(subscriber, await this.items(businessTableOf(subscriber)));
    }
    return result;
  }

  #delivered(row: Record<string, unknown>): void {
    const subscriber = typeof row.subscriber === 'string' ? row.subscriber : undefined;
    const key = String(row.messageId);
    // A delivery row is keyed `<messageId>#<subscriber>`; the SNS design's one row per message by the id itself.
    const messageId = subscriber === undefined ? key : key.slice(0, -(subscriber.length + 1));
    const expected = this.options.transport === 'sqs' ? this.options.subscribers.length : 1;
    const count = (this.#confirmedDeliveries.get(messageId) ?? 0) + 1;
    this.#confirmedDeliveries.set(messageId, count);
    if (count === expected) {
      this.confirmedAt.set(messageId, performance.now());
      for (const listener of this.#onConfirmed) listener();
    }
  }

  /**
   * One invocation by an SQS event source mapping: ReceiveMessage (batch of `max`), the function, then one
   * DeleteMessageBatch of the records it did not report failed. A failed record stops the run: the happy path
   * has none, and a hidden one would only stall it for the visibility timeout.
   */
  async #mapping(mapping: {
    readonly queueUrl: string;
    readonly max: number;
    readonly invoke: (records: SQSRecord[]) => Promise<SQSBatchResponse>;
    readonly deleted: () => void;
  }): Promise<number> {
    const { queueUrl, max, invoke } = mapping;
    await pause(this.#latency.sqsMs);
    const records = this.queues.receive(queueUrl, max);
    if (records.length === 0) return 0;
    const response = await invoke(records);
    if (response.batchItemFailures.length > 0) {
      throw new Error(`${queueUrl}: ${response.batchItemFailures.length} record(s) failed`);
    }
    await pause(this.#latency.sqsMs);
    mapping.deleted();
    for (const record of records) this.queues.delete(queueUrl, record.receiptHandle);
    return records.length;
  }

  #functions(): Built {
    if (this.#built === undefined) throw new Error('FanOutPipeline.start() was not called');
    return this.#built;
  }

  async #build(): Promise<Built> {
    const { transport, subscribers } = this.options;
    const subscriptions = {
      [ORDER_CREATED]: Object.fromEntries(subscribers.map((name) => [name, subscriberQueueOf(name)])),
      [ORDER_CANCELLED]: Object.fromEntries(subscribers.map((name) => [name, subscriberQueueOf(name)])),
    };
    const sqsClient = memorySqsClient(this.queues, {
      latencyMs: this.#latency.sqsMs,
      onRequest: (url) => {
        if (url === RECEIPT_QUEUE) this.counts.receiptSends += 1;
        else this.counts.relaySends += 1;
      },
    });
    const producerEnv = {
      OUTBOX_TABLE: 'outbox',
      SEQUENCE_TABLE: 'sequences',
      ORDERED_TOPICS: JSON.stringify(EXAMPLE_ORDERING),
      ...(transport === 'sqs'
        ? { SUBSCRIPTIONS: JSON.stringify(subscriptions), TOPIC_QUEUES: '{}' }
        : {
            TOPIC_QUEUES: JSON.stringify({
              [ORDER_CREATED]: SNS_TOPIC_URL,
              [ORDER_CANCELLED]: SNS_TOPIC_URL,
            }),
          }),
    };
    const subscribersByTopic = { [ORDER_CREATED]: subscribers, [ORDER_CANCELLED]: subscribers };
    const writerClient =
      transport === 'sqs'
        ? this.client('orders')
        : withDeliveryMaps(this.client('orders'), { outboxTable: 'outbox', subscribers: subscribersByTopic });
    const writer = outboxWriterFromEnv(producerEnv, writerClient);
    const relayParts = relayDeps(producerEnv, { client: this.client('relay'), sqsClient });
    const relay: RelayDeps =
      transport === 'sqs'
        ? relayParts
        : {
            ...relayParts,
            publisher: snsTopicPublisher({
              queues: this.queues,
              subscriberQueues: subscribers.map(subscriberQueueOf),
              publishMs: this.#latency.snsMs,
              // SNS sends each copy to SQS on the producer's behalf: one SQS send's latency after the publish.
              deliveryMs: this.#latency.sqsMs,
              counts: this.counts.sns,
              pending: this.#pendingDeliveries,
            }),
          };
    const consumers = new Map<string, SqsConsumer>(
      subscribers.map((subscriber) => {
        const env = {
          INBOX_TABLE: inboxTableOf(subscriber),
          SUBSCRIBER: subscriber,
          RECEIPT_QUEUE_URL: RECEIPT_QUEUE,
          SOURCE_QUEUE_URL: subscriberQueueOf(subscriber),
          DEAD_LETTER_QUEUE_URL: `${subscriberQueueOf(subscriber)}-dlq`,
          MAX_RECEIVE_COUNT: '5',
        };
        const parts = consumerParts(env, () => subscriberPlan(subscriber), {
          client: this.client(`consumer:${subscriber}`),
          sqsClient,
        });
        return [
          subscriber,
          {
            ...parts,
            logger: quiet,
            conflictKeys: subscriberConflictKeys(subscriber),
          },
        ];
      }),
    );
    // The receipts function builds its own DynamoDB client from the environment: it reaches the bench's tables
    // over a loopback endpoint (the SNS model's does too, so both pay the same round trip).
    const meter = this.meter;
    const endpoint = await startDynamoEndpoint(this.memory, {
      latencyMs: this.#latency.dynamoMs,
      ...(meter === undefined ? {} : { around: (operation) => meter.attribute('receipts', operation) }),
    });
    const receiptsEnv = {
      OUTBOX_TABLE: 'outbox',
      SUBSCRIPTIONS: JSON.stringify(subscriptions),
      AWS_ENDPOINT_URL: endpoint.endpoint,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'bench',
      AWS_SECRET_ACCESS_KEY: 'bench',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
      POWERTOOLS_TRACE_ENABLED: 'false',
    };
    const close = () => endpoint.close();
    if (transport === 'sns') {
      const client = createDocumentClient(awsClientConfig(receiptsEnv));
      return {
        writer,
        relay,
        consumers,
        receipts: async (event) => {
          await applySnsReceipts(event.Records, {
            client,
            outboxTable: 'outbox',
            subscriberCount: subscribers.length,
            clock: () => new Date(),
          });
          return { batchItemFailures: [] };
        },
        close,
      };
    }
    const handler = createReceiptsHandler().withEnv(receiptsEnv);
    return {
      writer,
      relay,
      consumers,
      receipts: (event) => handler(event, context('receipts')),
      close,
    };
  }
}

/** The functions of a run, built once. */
interface Built {
  readonly writer: ReturnType<typeof outboxWriterFromEnv>;
  readonly relay: RelayDeps;
  readonly consumers: ReadonlyMap<string, SqsConsumer>;
  readonly receipts: (event: SQSEvent) => Promise<SQSBatchResponse>;
  readonly close: () => Promise<void>;
}

function context(functionName: string) {
  const now = Date.now();
  return lambdaContext({
    functionName,
    memoryMb: CONSUMER_DEFAULTS.memorySize,
    timeoutSeconds: CONSUMER_DEFAULTS.timeout.toSeconds(),
    requestId: `bench-${functionName}-${now}`,
    startedAt: now,
  });
}
