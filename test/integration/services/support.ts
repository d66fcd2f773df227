/**
 * The three-service example — the order service (the producer, with the outbox), the inventory and the
 * loyalty services (its subscribers), each a stack of its own — deployed to one backend by the local runtime,
 * with the deployed handlers running and a few faults a test can switch on around them: receipts of one
 * subscriber lost on the way, a subscriber's deliveries hidden from the relay (only the sweeper sends them)
 * or refused by SQS, a delivery dead-lettered by its consumer. The scheduled sweeper is left to the tests,
 * which run it at the time they choose (past a confirmation deadline without waiting for it). What each
 * consumer received, each receipt lost and each send of those sweeps is recorded. Shared by the suites of
 * this folder and by the recorded-calls proof of least privilege (test/infra/iam), which records every
 * function's SDK calls through `runAs`.
 */
import { appendFileSync } from 'node:fs';
import { ScanCommand } from '@aws-sdk/lib-dynamodb';
import type { Context, DynamoDBStreamEvent, SQSEvent, SQSRecord } from 'aws-lambda';
import type { HandlerOverride, LocalHandler } from '../../../infra/dev/local/host/local-function.ts';
import { type LocalRuntime, startLocalRuntime } from '../../../infra/dev/local/host/runtime.ts';
import { asTemplate } from '../../../infra/dev/local/template/cloudformation-template.ts';
import { queueNameOf } from '../../../infra/dev/local/template/intrinsics.ts';
import { readApp } from '../../../infra/dev/local/template/read-app.ts';
import { seedStock } from '../../../infra/stacks/local-plugin.ts';
import { type ExampleTemplate, synthExampleTemplates } from '../../../infra/synth-template.ts';
import { awsClientConfig, createSqsClient } from '../../../shared/aws/clients.ts';
import { SqsQueueOperations } from '../../../shared/aws/sqs-queue-operations.ts';
import { runCli } from '../../../shared/cli/run-cli.ts';
import { sweeperDeps } from '../../../shared/lambda/sweeper-handler.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import type { MessagePublisher } from '../../../shared/relay/message-publisher.ts';
import type { RetryPolicy } from '../../../shared/retry/retry-policy.ts';
import { OutboxSettings } from '../../../shared/settings/outbox-settings.ts';
import { readSetting } from '../../../shared/settings/setting.ts';
import { type SweepReport, sweep } from '../../../shared/sweeper/sweep.ts';
import { runtimeBackend } from '../support/backend.ts';
import { documentClient, type JsonResponse, outputOf, request, waitFor } from '../support.ts';

/** The order service's subscribers. */
export const SUBSCRIBERS = ['inventory', 'loyalty'] as const;

/** One of {@link SUBSCRIBERS}. */
export type Subscriber = (typeof SUBSCRIBERS)[number];

/** The functions the tests name, as the runtime names them: `<stack>/<construct path>`. */
export const FUNCTIONS = {
  relay: 'OutboxOrders/Outbox/Relay',
  sweeper: 'OutboxOrders/Outbox/Sweeper',
  receipts: 'OutboxOrders/Outbox/Receipts',
  admin: 'OutboxOrders/Outbox/Admin',
  consumers: {
    inventory: 'OutboxInventory/Inventory/Consumer',
    loyalty: 'OutboxLoyalty/Loyalty/Consumer',
  },
} as const;

/** The deployed stacks' names, as `outbox --stack` takes them. */
export const LOCAL_STACKS = {
  orders: 'OutboxOrders-local',
  inventory: 'OutboxInventory-local',
  loyalty: 'OutboxLoyalty-local',
} as const;

/** The outputs naming each subscriber's own resources. */
export const SUBSCRIBER_OUTPUTS = {
  inventory: {
    table: 'inventoryTableName',
    inbox: 'inventoryInboxTableName',
    queue: 'inventoryQueueUrl',
    deadLetters: 'inventoryDeadLetterQueueUrl',
  },
  loyalty: {
    table: 'loyaltyTableName',
    inbox: 'loyaltyInboxTableName',
    queue: 'loyaltyQueueUrl',
    deadLetters: 'loyaltyDeadLetterQueueUrl',
  },
} as const satisfies Record<Subscriber, Record<string, string>>;

/** `<orderId> <subscriber>`: one subscriber's deliveries of one order, as the faults name them. */
export function deliveryKey(orderId: string, subscriber: Subscriber): string {
  return `${orderId} ${subscriber}`;
}

/** Faults the tests switch on and off. */
export interface ServiceFaults {
  /** Receipts these subscribers send are lost on the way: the receipts function never sees them. */
  readonly dropReceipts: Set<Subscriber>;
  /** The relay never sees the INSERT of these deliveries ({@link deliveryKey}): only the sweeper sends them. */
  readonly hideFromRelay: Set<string>;
  /** SQS refuses the tests' sweeps' sends to these subscribers' queues. */
  readonly refuseSends: Set<Subscriber>;
  /**
   * These deliveries ({@link deliveryKey}) fail at their consumer on their last receive: it dead-letters them
   * with its reason (`MAX_RECEIVES`), as the consumer does. Once each: a redriven copy is applied.
   */
  readonly deadLetter: Set<string>;
}

/** A message as a subscriber's consumer received it. */
export interface Received {
  readonly messageId: string;
  readonly topic: string;
  readonly aggregateId: string;
  /** The SQS record, as the consumer got it (body and attributes as sent). */
  readonly record: SQSRecord;
}

/** A receipt lost on the way ({@link ServiceFaults.dropReceipts}). */
export interface LostReceipt {
  readonly messageId: string;
  readonly subscriber: string;
  readonly outcome: string;
}

/** One send of a test's sweep: the queue and the message ids, and whether SQS took them. */
export interface SweepSend {
  readonly queueUrl: string;
  readonly messageId: string;
  readonly refused: boolean;
}

/** What happened around the handlers. */
export interface Observations {
  /** Every record each subscriber's consumer was invoked with, in order. */
  readonly received: Record<Subscriber, Received[]>;
  readonly lostReceipts: LostReceipt[];
  readonly sweepSends: SweepSend[];
}

/** Options of {@link startServices}. */
export interface StartServicesOptions {
  /**
   * Runs each invocation of function `name` (and the tests' sweeps, as the sweeper's): the recorded-calls
   * proof attributes SDK calls with it. @default runs `work` as it is
   */
  readonly runAs?: <T>(name: string, work: () => Promise<T>) => Promise<T>;
  /** Powertools log level of the handlers. @default 'ERROR' (dead letters and dropped receipts warn on purpose) */
  readonly logLevel?: string;
}

/** The example running, its faults and what was observed. */
export interface Services {
  readonly runtime: LocalRuntime;
  readonly faults: ServiceFaults;
  readonly seen: Observations;
  /** The URL of a subscriber's queue. */
  queueUrl(subscriber: Subscriber): string;
  /**
   * One sweeper round at `at`, as the scheduled sweeper runs one, with its deployed settings; sends to the
   * queues of {@link ServiceFaults.refuseSends} refused. `maxAttempts` overrides a subscriber's retry policy.
   */
  sweepAt(
    at: Date,
    options?: { readonly maxAttempts?: Partial<Record<Subscriber, number>> },
  ): Promise<SweepReport>;
  /** Runs the deployed sweeper function once (its run cut to a few seconds). */
  invokeSweeper(): Promise<unknown>;
  /** Stops a subscriber's consumer: its queue fills, nothing it has is applied, until {@link resume}. */
  pause(subscriber: Subscriber): Promise<void>;
  resume(subscriber: Subscriber): void;
  /**
   * Polls every running poller until a full round finds nothing waiting (a paused consumer's queue is left as
   * it is, which `runtime.drain()` would not do).
   */
  settle(): Promise<void>;
  stop(): Promise<void>;
}

let templates: ExampleTemplate[] | undefined;

/** The example's three templates, synthesized once per test file. */
export function exampleTemplates(): ExampleTemplate[] {
  templates ??= synthExampleTemplates({ emulator: true });
  return templates;
}

/** Every function of the example, as the runtime names them (`OutboxOrders/Outbox/Relay`). */
export function exampleFunctionNames(): string[] {
  return exampleTemplates().flatMap(({ stackName, template }) =>
    readApp(asTemplate(template)).functions.map((fn) => `${stackName}/${fn.name}`),
  );
}

/** The event that makes the sweeper function run (every other invocation, the schedule's, does nothing). */
const SWEEP_NOW = { sweepNow: true } as const;

/** How long the sweeper function may run when a test invokes it: it keeps going while something falls due. */
const SWEEPER_RUN_MS = 3_000;

/**
 * Starts the three services on the test backend (moto, else embedded; see support/backend.ts) on a free port,
 * with the starting stock `npm start` puts in.
 */
export async function startServices(options: StartServicesOptions = {}): Promise<Services> {
  const runAs = options.runAs ?? (<T>(_name: string, work: () => Promise<T>) => work());
  const faults: ServiceFaults = {
    dropReceipts: new Set(),
    hideFromRelay: new Set(),
    refuseSends: new Set(),
    deadLetter: new Set(),
  };
  const seen: Observations = { received: { inventory: [], loyalty: [] }, lostReceipts: [], sweepSends: [] };
  const harness: Record<string, HandlerOverride> = {
    [FUNCTIONS.relay]: (base) => (event, context) => base(withoutHidden(event, faults), context),
    [FUNCTIONS.receipts]: (base) => (event, context) => base(withoutLost(event, faults, seen), context),
    [FUNCTIONS.sweeper]: (base) => (event, context) =>
      isSweepNow(event) ? base(event, cappedContext(context, SWEEPER_RUN_MS)) : Promise.resolve({}),
    ...Object.fromEntries(
      SUBSCRIBERS.map((subscriber) => [
        FUNCTIONS.consumers[subscriber],
        observedConsumer(subscriber, { faults, seen }),
      ]),
    ),
  };
  const handlers = Object.fromEntries(
    exampleFunctionNames().map((name): [string, HandlerOverride] => {
      const own = harness[name];
      return [
        name,
        (base, env) => {
          const handler = own === undefined ? base : own(base, env);
          return (event, context) => runAs(name, () => Promise.resolve(handler(event, context)));
        },
      ];
    }),
  );
  const runtime = await startLocalRuntime({
    backend: runtimeBackend(),
    port: 0,
    log: () => {},
    logLevel: options.logLevel ?? 'ERROR',
    pollIntervalMs: 100,
    // A batch a consumer hands back comes again a second later, not after the queue's visibility timeout.
    retryVisibilitySeconds: 1,
    templates: exampleTemplates(),
    handlers,
  });
  try {
    await seedStock(runtime.apiUrl);
  } catch (error) {
    await runtime.stop();
    throw error;
  }
  const pollerOf = (subscriber: Subscriber) => {
    const poller = runtime.pollers.find(
      (candidate) => candidate.functionName === FUNCTIONS.consumers[subscriber],
    );
    if (poller === undefined) throw new Error(`no poller runs ${FUNCTIONS.consumers[subscriber]}`);
    return poller;
  };
  let sweeps = 0;
  return {
    runtime,
    faults,
    seen,
    queueUrl: (subscriber) => outputOf(runtime, SUBSCRIBER_OUTPUTS[subscriber].queue),
    sweepAt(at, sweepOptions = {}) {
      const deps = sweeperDeps(runtime.env[FUNCTIONS.sweeper] ?? {});
      const subscriberOf = subscriberOfQueue(runtime);
      const maxAttempts = sweepOptions.maxAttempts ?? {};
      let rounds = 1;
      sweeps += 1;
      return runAs(FUNCTIONS.sweeper, () =>
        sweep({
          ...deps,
          publisher: refusingPublisher(deps.publisher, {
            refuses: (queueUrl) => {
              const subscriber = subscriberOf(queueUrl);
              return subscriber !== undefined && faults.refuseSends.has(subscriber);
            },
            sends: seen.sweepSends,
          }),
          retryPolicyFor: (topic: string, subscriber?: string): RetryPolicy => {
            const policy = deps.retryPolicyFor(topic, subscriber);
            const attempts = maxAttempts[subscriber as Subscriber];
            return attempts === undefined ? policy : { ...policy, maxAttempts: attempts };
          },
          clock: () => at,
          owner: `test-sweep-${sweeps}`,
          remainingMs: () => (rounds-- > 0 ? Number.MAX_SAFE_INTEGER : 0),
          sleep: async () => {},
          settings: { ...deps.settings, stopBeforeMs: 0 },
        }),
      );
    },
    async invokeSweeper() {
      const invocation = await runtime.invoke(FUNCTIONS.sweeper, SWEEP_NOW);
      if (!invocation.ok) throw invocation.error;
      return invocation.result;
    },
    pause: (subscriber) => pollerOf(subscriber).pause(),
    resume: (subscriber) => pollerOf(subscriber).resume(),
    async settle() {
      const deadline = Date.now() + 30_000;
      for (;;) {
        const results = [];
        for (const poller of runtime.pollers.filter((candidate) => !candidate.paused)) {
          results.push(await poller.pollOnce());
        }
        if (results.every((result) => result.idle)) return;
        if (Date.now() > deadline) throw new Error('the running pollers were still busy after 30 s');
      }
    },
    stop: () => runtime.stop(),
  };
}

/**
 * The subscriber whose queue a URL names, by the queue's name: the outbox's senders build the URLs from the
 * subscriber's account and region, which on an emulator differ from the URLs the emulator answers with.
 */
export function subscriberOfQueue(runtime: LocalRuntime): (queueUrl: string) => Subscriber | undefined {
  const byName = new Map(
    SUBSCRIBERS.map((subscriber) => [
      queueNameOf(outputOf(runtime, SUBSCRIBER_OUTPUTS[subscriber].queue)),
      subscriber,
    ]),
  );
  return (queueUrl) => byName.get(queueNameOf(queueUrl));
}

/** Switches every fault off. */
export function clearFaults(faults: ServiceFaults): void {
  for (const set of Object.values(faults) as Set<string>[]) set.clear();
}

function isSweepNow(event: unknown): boolean {
  return typeof event === 'object' && event !== null && (event as { sweepNow?: unknown }).sweepNow === true;
}

/** The Lambda context with at most `ms` left from now. */
function cappedContext(context: Context, ms: number): Context {
  const deadline = Date.now() + ms;
  return {
    ...context,
    getRemainingTimeInMillis: () => Math.min(context.getRemainingTimeInMillis(), deadline - Date.now()),
  };
}

/** The stream event without the INSERT records of the deliveries hidden from the relay. */
function withoutHidden(event: unknown, faults: ServiceFaults): DynamoDBStreamEvent {
  const { Records = [] } = event as DynamoDBStreamEvent;
  return {
    Records: Records.filter((record) => {
      const image = record.dynamodb?.NewImage;
      const key = `${image?.aggregateId?.S} ${image?.subscriber?.S}`;
      return record.eventName !== 'INSERT' || !faults.hideFromRelay.has(key);
    }),
  };
}

/** The receipt event without the receipts of the subscribers whose receipts are lost (each noted in `seen`). */
function withoutLost(event: unknown, faults: ServiceFaults, seen: Observations): SQSEvent {
  const { Records = [] } = event as SQSEvent;
  return {
    Records: Records.filter((record) => {
      const receipts = receiptsIn(record.body);
      const lost = receipts.some((receipt) => faults.dropReceipts.has(receipt.subscriber as Subscriber));
      if (lost) seen.lostReceipts.push(...receipts);
      return !lost;
    }),
  };
}

function receiptsIn(body: string): LostReceipt[] {
  try {
    const parsed = JSON.parse(body) as { receipts?: LostReceipt[] };
    return Array.isArray(parsed.receipts) ? parsed.receipts : [];
  } catch {
    return [];
  }
}

/**
 * A subscriber's deployed consumer, each record it is invoked with noted; a delivery in
 * {@link ServiceFaults.deadLetter} is dead-lettered instead, with the consumer's own adapter and reason, as
 * the consumer does on a message's last receive when its downstream keeps failing.
 */
function observedConsumer(
  subscriber: Subscriber,
  { faults, seen }: { readonly faults: ServiceFaults; readonly seen: Observations },
): HandlerOverride {
  return (base, env) => {
    const queues = new SqsQueueOperations(createSqsClient(awsClientConfig(env)));
    const deadLetterQueueUrl = readSetting(env, OutboxSettings.deadLetterQueueUrl);
    return async (event, context) => {
      const kept: SQSRecord[] = [];
      for (const record of (event as SQSEvent).Records) {
        const message = envelopeIn(record.body);
        if (message !== undefined) seen.received[subscriber].push({ ...message, record });
        const key = message === undefined ? '' : deliveryKey(message.aggregateId, subscriber);
        if (faults.deadLetter.delete(key)) {
          await queues.deadLetter({
            queueUrl: deadLetterQueueUrl,
            record,
            reason: 'MAX_RECEIVES',
            lastError: `TimeoutError: the ${subscriber} table did not answer`,
          });
          continue;
        }
        kept.push(record);
      }
      return (base as LocalHandler)({ Records: kept }, context);
    };
  };
}

function envelopeIn(body: string): Pick<Envelope, 'messageId' | 'topic' | 'aggregateId'> | undefined {
  try {
    const { messageId, topic, aggregateId } = JSON.parse(body) as Partial<Envelope>;
    return typeof messageId === 'string' && typeof topic === 'string' && typeof aggregateId === 'string'
      ? { messageId, topic, aggregateId }
      : undefined;
  } catch {
    return undefined;
  }
}

/** `publisher` that refuses the sends to the queues `refuses` names, as SQS refuses a batch entry; all noted. */
function refusingPublisher(
  publisher: MessagePublisher,
  options: { readonly refuses: (queueUrl: string) => boolean; readonly sends: SweepSend[] },
): MessagePublisher {
  return {
    publishBatch: async (queueUrl: string, messages: readonly Envelope[]) => {
      if (options.refuses(queueUrl)) {
        for (const { messageId } of messages) options.sends.push({ queueUrl, messageId, refused: true });
        return {
          sent: [],
          failed: messages.map((m) => ({
            messageId: m.messageId,
            error: 'InternalError: refused by the test',
          })),
        };
      }
      const result = await publisher.publishBatch(queueUrl, messages);
      for (const messageId of result.sent) options.sends.push({ queueUrl, messageId, refused: false });
      return result;
    },
  };
}

/** A message of an order as `GET /orders/{orderId}` shows it, with its deliveries. */
export interface ShownMessage {
  readonly messageId: string;
  readonly topic: string;
  readonly status: string;
  readonly deliveries: readonly ShownDelivery[];
}

/** One subscriber's delivery of a message, as the order page shows it. */
export interface ShownDelivery {
  readonly subscriber: string;
  readonly status: string;
  readonly attempts?: number;
  readonly outcome?: string;
}

/** `GET /orders/{orderId}`: the order's page, its messages in their sequence. */
export async function orderPage(runtime: LocalRuntime, orderId: string): Promise<JsonResponse['body']> {
  const response = await request(runtime, `GET /orders/${orderId}`);
  if (response.status !== 200) throw new Error(`GET /orders/${orderId} answered ${response.status}`);
  return response.body;
}

/** The messages of an order, as its page shows them. */
export async function messagesOf(runtime: LocalRuntime, orderId: string): Promise<ShownMessage[]> {
  return (await orderPage(runtime, orderId)).messages as ShownMessage[];
}

/** `subscriber status outcome` of each delivery of a shown message, for compact assertions. */
export function deliveryStates(message: ShownMessage | undefined): string[] {
  return (message?.deliveries ?? []).map((d) =>
    [d.subscriber, d.status, d.outcome].filter(Boolean).join(' '),
  );
}

/**
 * Waits (up to 30 s) until the order shows `count` messages, every one CONFIRMED, and returns them; fails if
 * any page read on the way showed a message CONFIRMED before each of its deliveries was.
 */
export async function waitForConfirmed(
  runtime: LocalRuntime,
  orderId: string,
  count = 1,
): Promise<ShownMessage[]> {
  const premature: string[] = [];
  const messages = await waitFor(
    async () => {
      const shown = await messagesOf(runtime, orderId);
      for (const message of shown) {
        if (message.status === 'CONFIRMED' && message.deliveries.some((d) => d.status !== 'CONFIRMED')) {
          premature.push(`${message.messageId}: ${deliveryStates(message).join(', ')}`);
        }
      }
      const settled = shown.length === count && shown.every((m) => m.status === 'CONFIRMED');
      return settled ? shown : undefined;
    },
    30_000,
    `${count} CONFIRMED messages of order ${orderId}`,
  );
  if (premature.length > 0)
    throw new Error(`shown CONFIRMED before all its deliveries: ${premature.join('; ')}`);
  return messages;
}

/** Places an order through the order service's API; its id and its message's id. */
export async function placeOrder(
  runtime: LocalRuntime,
  order: {
    readonly orderId: string;
    readonly customerId: string;
    readonly items: { sku: string; quantity: number }[];
  },
): Promise<{ orderId: string; messageId: string }> {
  const response = await request(runtime, 'POST /orders', order);
  if (response.status !== 201) {
    throw new Error(`POST /orders answered ${response.status}: ${JSON.stringify(response.body)}`);
  }
  return response.body;
}

/** Cancels an order through the API; the cancellation's message id. */
export async function cancelOrder(runtime: LocalRuntime, orderId: string): Promise<string> {
  const response = await request(runtime, `POST /orders/${orderId}/cancel`);
  if (response.status !== 202) {
    throw new Error(
      `POST /orders/${orderId}/cancel answered ${response.status}: ${JSON.stringify(response.body)}`,
    );
  }
  return response.body.messageId;
}

/** Sets a SKU's stock through the inventory service's API. */
export async function putStock(runtime: LocalRuntime, sku: string, available: number): Promise<void> {
  const response = await request(runtime, `PUT /inventory/${sku}`, { available });
  if (response.status !== 200) throw new Error(`PUT /inventory/${sku} answered ${response.status}`);
}

/** A SKU's available stock, read through the inventory service's API. */
export async function stockOf(runtime: LocalRuntime, sku: string): Promise<number> {
  const response = await request(runtime, `GET /inventory/${sku}`);
  if (response.status !== 200) throw new Error(`GET /inventory/${sku} answered ${response.status}`);
  return response.body.available;
}

/** A customer's points, read through the loyalty service's API; `undefined` for a customer it never saw (404). */
export async function pointsOf(runtime: LocalRuntime, customerId: string): Promise<number | undefined> {
  const response = await request(runtime, `GET /loyalty/${customerId}`);
  if (response.status === 404) return undefined;
  if (response.status !== 200) throw new Error(`GET /loyalty/${customerId} answered ${response.status}`);
  return response.body.points;
}

/** Every item of the table an output names (`outboxTableName`, `loyaltyInboxTableName`). */
export async function scanTable(runtime: LocalRuntime, output: string): Promise<Record<string, unknown>[]> {
  const client = documentClient(runtime);
  const items: Record<string, unknown>[] = [];
  let start: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new ScanCommand({
        TableName: outputOf(runtime, output),
        ConsistentRead: true,
        ExclusiveStartKey: start,
      }),
    );
    items.push(...(page.Items ?? []));
    start = page.LastEvaluatedKey;
  } while (start !== undefined);
  client.destroy();
  return items;
}

/** The outbox rows of an aggregate: its messages' deliveries and the outbox's own messages about it. */
export async function outboxRowsOf(
  runtime: LocalRuntime,
  aggregateId: string,
): Promise<Record<string, unknown>[]> {
  return (await scanTable(runtime, 'outboxTableName')).filter((row) => row.aggregateId === aggregateId);
}

/** Waits (up to 30 s) until one subscriber's delivery of an order's message (its first by default) has `status`. */
export async function waitForDelivery(
  runtime: LocalRuntime,
  delivery: {
    readonly orderId: string;
    readonly subscriber: Subscriber;
    readonly status: string;
    /** The message's place among the order's. @default 0 */
    readonly message?: number;
  },
): Promise<void> {
  const { orderId, subscriber, status } = delivery;
  await waitFor(
    async () => {
      const message = (await messagesOf(runtime, orderId))[delivery.message ?? 0];
      return message?.deliveries.find((d) => d.subscriber === subscriber)?.status === status
        ? true
        : undefined;
    },
    30_000,
    `${subscriber}'s delivery of ${orderId} to be ${status}`,
  );
}

/** The sends of the tests' sweeps of one message, each as the subscriber whose queue it went to (`(refused)`). */
export function sweepSendsOf(services: Services, messageId: string): string[] {
  const subscriberOf = subscriberOfQueue(services.runtime);
  return services.seen.sweepSends
    .filter((send) => send.messageId === messageId)
    .map((send) => `${subscriberOf(send.queueUrl) ?? send.queueUrl}${send.refused ? ' (refused)' : ''}`);
}

/** The records a subscriber's consumer received of one message. */
export function receivedOf(services: Services, subscriber: Subscriber, messageId: string): Received[] {
  return services.seen.received[subscriber].filter((received) => received.messageId === messageId);
}

/** What `outbox <argv>` printed and its exit code. */
export interface CliRun {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `outbox <argv>` against the runtime's emulator, as `npm run outbox` does with AWS_ENDPOINT_URL set. */
export async function outbox(runtime: LocalRuntime, ...argv: string[]): Promise<CliRun> {
  let stdout = '';
  let stderr = '';
  const { credentials, region } = runtime.clientConfig;
  const code = await runCli(argv, {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: {
      AWS_ENDPOINT_URL: runtime.endpoint,
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
  });
  // Set OUTBOX_CLI_TRANSCRIPT to a file to record the session.
  const transcript = process.env.OUTBOX_CLI_TRANSCRIPT;
  if (transcript) appendFileSync(transcript, `$ npm run outbox -- ${argv.join(' ')}\n${stdout}${stderr}\n`);
  return { code, stdout, stderr };
}
