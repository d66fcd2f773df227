/**
 * Monthly cost on AWS of an order delivered to N subscribers confirmed by receipts, by transport: from the units
 * and bytes measured per order, the invocations and requests the mappings make at a monthly volume (as the cost
 * model counts them), and list prices. Pure.
 */
import {
  CONSUMER_DEFAULTS,
  FUNCTION_DEFAULTS,
  RELAY_DEFAULTS,
  SWEEPER_DEFAULTS,
} from '../../constructs/index.ts';
import { AWS_PRICES } from './aws-prices.ts';
import {
  COST_ASSUMPTIONS,
  type CostBreakdown,
  consumerInvocations,
  lambdaCost,
  relayInvocations,
  SECONDS_PER_MONTH,
} from './cost-model.ts';

/** What one order costs as measured, per order. */
export interface FanOutUsage {
  readonly subscribers: number;
  readonly writeUnits: number;
  readonly readUnits: number;
  /** Outbox rows (stream records) per order: one per delivery, or one. */
  readonly outboxRows: number;
  /** Bytes the outbox and the inboxes keep per order until TTL. */
  readonly retainedBytes: number;
  /** Bytes of one message's envelope on the wire (what SNS FIFO bills by the GB). */
  readonly messageBytes: number;
}

/** How the producer reaches its subscribers: a row per delivery sent to each queue, or SNS (standard or FIFO). */
export type FanOutCostTransport = 'sqs' | 'sns' | 'sns-fifo';

/** The receipts mapping's batching window, as `OutboxReceipts` sets it. */
export const RECEIPTS_WINDOW_SECONDS = 1;
/** The receipts function's assumed warm duration per invocation (a few conditional updates). */
export const RECEIPTS_INVOCATION_MS = 30;

/** Receipts function invocations a month for `messages` receipt messages: batches of 10, at most one a window. */
export function receiptsInvocations(messages: number): number {
  const windows = SECONDS_PER_MONTH / RECEIPTS_WINDOW_SECONDS;
  return Math.max(messages / 10, Math.min(messages, windows));
}

/** Monthly dollars by component of `orders` orders a month, each delivered to `usage.subscribers` subscribers. */
export function fanOutMonthlyCost(
  orders: number,
  usage: FanOutUsage,
  transport: FanOutCostTransport,
): CostBreakdown {
  const a = COST_ASSUMPTIONS;
  const n = usage.subscribers;
  const relayCalls = relayInvocations(orders * usage.outboxRows);
  const consumerCalls = n * consumerInvocations(orders);
  // A consumer invocation's receipts go out together: one receipt message (one SendMessageBatch) each.
  const receiptMessages = consumerCalls;
  const receiptsCalls = receiptsInvocations(receiptMessages);
  const sns = transport !== 'sqs';
  // Per relay invocation one request per queue it sends to (N queues, or the topic), 10 messages at most each.
  const producerRequests = sns
    ? Math.max(orders / 10, relayCalls)
    : Math.max((orders * n) / 10, relayCalls * n);
  const emptyReceives = (n + 1) * a.emptyReceivesPerMonth;
  const queueRequests = 2 * consumerCalls + receiptMessages + 2 * receiptsCalls + emptyReceives;
  const sqsPrice =
    transport === 'sns-fifo' ? AWS_PRICES.sqsFifoPerMillionRequests : AWS_PRICES.sqsPerMillionRequests;
  const invocations = orders + relayCalls + consumerCalls + receiptsCalls;
  // Log lines per message handled: the POST, the relay (per row), each consumer and each receipt.
  const handled = orders + orders * usage.outboxRows + 2 * orders * n;
  const logGb = (invocations * a.logBytesPerInvocation + handled * a.logBytesPerMessage) / 1024 ** 3;
  const traced =
    Math.min(orders, a.xrayReservoirPerSecond * SECONDS_PER_MONTH) +
    a.xrayRate * Math.max(0, orders - a.xrayReservoirPerSecond * SECONDS_PER_MONTH);
  const retainedGb = (orders * usage.retainedBytes) / 1024 ** 3;
  const sweeperRuns = SECONDS_PER_MONTH / SWEEPER_DEFAULTS.scheduleRate.toSeconds();
  const cost: CostBreakdown = {
    'API Gateway (REST)': (orders / 1e6) * AWS_PRICES.apiGatewayRestPerMillion,
    'Lambda: create order': lambdaCost(orders, a.createOrderMs, FUNCTION_DEFAULTS.memorySize),
    'Lambda: relay': lambdaCost(relayCalls, a.relayInvocationMs, RELAY_DEFAULTS.memorySize),
    'Lambda: consumers': lambdaCost(consumerCalls, a.consumerInvocationMs, CONSUMER_DEFAULTS.memorySize),
    'Lambda: receipts': lambdaCost(receiptsCalls, RECEIPTS_INVOCATION_MS, CONSUMER_DEFAULTS.memorySize),
    'Lambda: sweeper (idle runs)': lambdaCost(sweeperRuns, a.sweeperIdleRunMs, SWEEPER_DEFAULTS.memorySize),
    'DynamoDB writes': (orders * usage.writeUnits * AWS_PRICES.dynamoPerMillionWriteUnits) / 1e6,
    'DynamoDB reads': (orders * usage.readUnits * AWS_PRICES.dynamoPerMillionReadUnits) / 1e6,
    'DynamoDB storage + PITR':
      retainedGb * (AWS_PRICES.dynamoStoragePerGbMonth + AWS_PRICES.dynamoPitrPerGbMonth),
    'SQS: relay sends': sns ? 0 : (producerRequests / 1e6) * sqsPrice,
    'SQS: subscriber and receipt queues': (queueRequests / 1e6) * sqsPrice,
    'CloudWatch Logs': logGb * AWS_PRICES.logsIngestionPerGb,
    'X-Ray traces': (traced / 1e6) * AWS_PRICES.xrayPerMillionTraces,
  };
  if (transport === 'sns') {
    cost['SNS publishes'] = (producerRequests / 1e6) * AWS_PRICES.snsPublishPerMillionRequests;
    cost['SNS → SQS deliveries'] = ((orders * n) / 1e6) * AWS_PRICES.snsToSqsDeliveryPerMillion;
  } else if (transport === 'sns-fifo') {
    const publishedGb = (orders * usage.messageBytes) / 1024 ** 3;
    cost['SNS publishes'] =
      (producerRequests / 1e6) * AWS_PRICES.snsFifoPublishPerMillionRequests +
      publishedGb * AWS_PRICES.snsFifoPublishPerGb;
    cost['SNS → SQS deliveries'] =
      ((orders * n) / 1e6) * AWS_PRICES.snsFifoDeliveryPerMillion +
      n * publishedGb * AWS_PRICES.snsFifoDeliveryPerGb;
  }
  return cost;
}
