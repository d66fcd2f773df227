/**
 * A model of an order's way from POST to CONFIRMED on AWS, hop by hop: AWS's documented behaviour where it
 * publishes one (stream polling rate, batching windows, long polling), named assumptions where it does not.
 * Pure: the batching windows and the relay's memory come from the synthesized template.
 */
import { AWS_PRICES } from './aws-prices.ts';

/** Pages the model's documented figures come from. */
export const AWS_LATENCY_SOURCES = {
  /** Lambda polls each stream shard 4 times a second; a batching window buffers records until it expires. */
  streamPolling: 'https://docs.aws.amazon.com/lambda/latest/dg/with-ddb.html',
  /** DynamoDB Streams writes stream records "in near-real time" (no figure). */
  streamRecords: 'https://docs.aws.amazon.com/amazondynamodb/latest/developerguide/Streams.html',
  /** Lambda long-polls a standard queue and invokes as messages become available. */
  queuePolling: 'https://docs.aws.amazon.com/lambda/latest/dg/services-sqs-scaling.html',
  /** MaximumBatchingWindowInSeconds: 0 by default for streams and SQS. */
  windowDefault: 'https://docs.aws.amazon.com/lambda/latest/dg/services-ddb-params.html',
  /** Cold starts: under 1% of invocations in production workloads. */
  coldStarts: 'https://docs.aws.amazon.com/lambda/latest/operatorguide/execution-environments.html',
  /** Request and GB-second prices (us-east-1, arm64). */
  lambdaPricing: 'https://aws.amazon.com/lambda/pricing/',
} as const;

/** Lambda reads each DynamoDB stream shard at a base rate of 4 times a second. */
export const STREAM_POLLS_PER_SECOND = 4;

/** Lambda's prices in us-east-1 for arm64 functions. */
export const LAMBDA_PRICES = {
  perMillionRequests: AWS_PRICES.lambdaPerMillionRequests,
  perGbSecond: AWS_PRICES.lambdaArmPerGbSecond,
} as const;

/**
 * Delays AWS publishes no figure for, in milliseconds: warm functions, single-digit-millisecond DynamoDB
 * calls, a p99 that leaves room for an occasional cold start.
 */
export const ASSUMED_DELAYS_MS = {
  /** API Gateway, the CreateOrder function and its TransactWriteItems (order + outbox message). */
  write: { p50: 40, p99: 300 },
  /** A committed write until its stream record can be read ("near-real time"). */
  streamRecord: { p50: 100, p99: 500 },
  /** The relay's SendMessageBatch and the conditional update to SENT. */
  relaySend: { p50: 30, p99: 150 },
  /** A sent message until a waiting long poll of the consumer mapping returns it. */
  queueDelivery: { p50: 20, p99: 200 },
  /** The consumer's inbox transaction and the outbox update to CONFIRMED. */
  consumerApply: { p50: 40, p99: 200 },
} as const;

/** Assumed billed duration of one relay invocation of a few records, in milliseconds. */
export const ASSUMED_RELAY_INVOCATION_MS = 50;

/** The two event source mappings' batching windows, in seconds, as the template sets them. */
export interface BatchingWindows {
  readonly relaySeconds: number;
  readonly consumerSeconds: number;
}

/** One hop of the way, with its delay and what the figure rests on. */
export interface LatencyHop {
  readonly hop: string;
  readonly p50Ms: number;
  readonly p99Ms: number;
  /** Which figures are AWS's and which are assumed. */
  readonly basis: string;
}

/**
 * The hops from POST to CONFIRMED of a lone order (no other traffic): each record waits the whole of each
 * batching window, the case the windows cost most.
 * @example
 * sumHops(awsLatencyModel({ relaySeconds: 1, consumerSeconds: 1 })).p50Ms; // 2355
 */
export function awsLatencyModel(windows: BatchingWindows): LatencyHop[] {
  const pollGapMs = 1000 / STREAM_POLLS_PER_SECOND;
  const delays = ASSUMED_DELAYS_MS;
  return [
    {
      hop: 'API Gateway + CreateOrder (write)',
      ...assumed(delays.write),
      basis: 'assumption (p99: a cold start, <1% of calls)',
    },
    {
      hop: 'stream record read by the relay mapping',
      // The record waits for the next of the shard's polls: half a gap at the median, a whole one at worst.
      p50Ms: delays.streamRecord.p50 + pollGapMs / 2,
      p99Ms: delays.streamRecord.p99 + pollGapMs,
      basis: `documented ${STREAM_POLLS_PER_SECOND} polls/s; propagation assumed`,
    },
    windowHop('relay batching window', windows.relaySeconds),
    { hop: 'relay: SQS send + mark SENT', ...assumed(delays.relaySend), basis: 'assumption' },
    {
      hop: 'SQS → consumer mapping (long poll)',
      ...assumed(delays.queueDelivery),
      basis: 'documented long polling; delay assumed',
    },
    windowHop('consumer batching window', windows.consumerSeconds),
    { hop: 'consumer transaction + CONFIRMED', ...assumed(delays.consumerApply), basis: 'assumption' },
  ];
}

/**
 * The whole way: the sum of the hops' medians, and the sum of their p99s, an upper bound (the hops rarely
 * all hit their tail in the same message).
 */
export function sumHops(hops: readonly LatencyHop[]): { readonly p50Ms: number; readonly p99Ms: number } {
  return {
    p50Ms: hops.reduce((total, hop) => total + hop.p50Ms, 0),
    p99Ms: hops.reduce((total, hop) => total + hop.p99Ms, 0),
  };
}

/**
 * The most a relay window of 0 s adds per stream shard and month against `windowSeconds`: with a window the
 * mapping invokes at most once per window; without one, once per poll that finds records (4 a second). At high
 * volume batches fill either way and the counts meet; idle, neither invokes.
 */
export function extraRelayCostPerShardMonth(options: {
  readonly windowSeconds: number;
  readonly memoryMb: number;
}): { readonly invocations: number; readonly dollars: number } {
  const secondsPerMonth = 30 * 24 * 3600;
  const perSecondWithWindow = options.windowSeconds > 0 ? 1 / options.windowSeconds : STREAM_POLLS_PER_SECOND;
  const extraPerSecond = Math.max(0, STREAM_POLLS_PER_SECOND - perSecondWithWindow);
  const invocations = extraPerSecond * secondsPerMonth;
  const gbSeconds = invocations * (ASSUMED_RELAY_INVOCATION_MS / 1000) * (options.memoryMb / 1024);
  return {
    invocations,
    dollars:
      (invocations / 1_000_000) * LAMBDA_PRICES.perMillionRequests + gbSeconds * LAMBDA_PRICES.perGbSecond,
  };
}

function assumed(delay: { readonly p50: number; readonly p99: number }): { p50Ms: number; p99Ms: number } {
  return { p50Ms: delay.p50, p99Ms: delay.p99 };
}

/** A batching window: the record that opens a batch waits all of it unless the batch fills (documented). */
function windowHop(name: string, seconds: number): LatencyHop {
  return {
    hop: `${name} (${seconds} s)`,
    p50Ms: seconds * 1000,
    p99Ms: seconds * 1000,
    basis: 'documented: a lone record waits it all',
  };
}
