/**
 * The AWS latency model of a lone order (see `latency-model.ts`) extended to a delivery confirmed by receipt, for
 * both fan-out transports: the consumer sends a receipt instead of writing the outbox, and the producer's receipts
 * function (its own mapping and batching window) confirms it; with SNS, the relay publishes to the topic and SNS
 * copies the message into each subscriber's queue. Subscribers work in parallel, so the model is the same for any
 * number of them (the slowest of several is a little later than one: not modelled). Pure.
 */
import { awsLatencyModel, type BatchingWindows, type LatencyHop } from './latency-model.ts';

/** Delays of the receipt hops and of SNS, which AWS publishes no figure for, in milliseconds. */
export const ASSUMED_FAN_OUT_DELAYS_MS = {
  /** The consumer's transaction, its receipt's 5 ms linger and the SendMessageBatch to the receipt queue. */
  consumerApplyAndReceipt: { p50: 65, p99: 300 },
  /** The receipts function's conditional update of the delivery row to CONFIRMED. */
  receiptConfirm: { p50: 20, p99: 100 },
  /** SNS: the map entry's update, then (for the last subscriber) the message's confirmation. */
  receiptConfirmWithMap: { p50: 40, p99: 200 },
  /** The relay's PublishBatch to the SNS topic and the update to SENT. */
  relayPublish: { p50: 35, p99: 200 },
  /** SNS copying the message into a subscriber's queue. */
  snsDelivery: { p50: 50, p99: 300 },
} as const;

/** The windows of the way with receipts: the relay's, each consumer's and the receipts function's mapping. */
export interface FanOutWindows extends BatchingWindows {
  readonly receiptsSeconds: number;
}

/** Which transport a model is of: rows per delivery sent to SQS, or one row per message published to SNS. */
export type FanOutModelTransport = 'sqs' | 'sns';

/**
 * The hops from POST to every delivery CONFIRMED of a lone order, confirmed by receipt.
 * @example
 * sumHops(fanOutLatencyModel('sqs', { relaySeconds: 0, consumerSeconds: 1, receiptsSeconds: 1 })).p50Ms;
 */
export function fanOutLatencyModel(transport: FanOutModelTransport, windows: FanOutWindows): LatencyHop[] {
  const delays = ASSUMED_FAN_OUT_DELAYS_MS;
  // The way to the consumer's batching window is the single-queue model's; only its last hop (confirming in the
  // outbox) is replaced by the receipt's way.
  const [write, stream, relayWindow, relaySend, queueDelivery, consumerWindow] = awsLatencyModel(windows) as [
    LatencyHop,
    LatencyHop,
    LatencyHop,
    LatencyHop,
    LatencyHop,
    LatencyHop,
  ];
  const assumed = (hop: string, delay: { readonly p50: number; readonly p99: number }): LatencyHop => ({
    hop,
    p50Ms: delay.p50,
    p99Ms: delay.p99,
    basis: 'assumption',
  });
  const toQueue =
    transport === 'sqs'
      ? [relaySend]
      : [
          assumed('relay: SNS PublishBatch + mark SENT', delays.relayPublish),
          assumed('SNS → subscriber queue', delays.snsDelivery),
        ];
  return [
    write,
    stream,
    relayWindow,
    ...toQueue,
    queueDelivery,
    consumerWindow,
    assumed('consumer transaction + receipt sent', delays.consumerApplyAndReceipt),
    { ...queueDelivery, hop: 'receipt queue → receipts mapping (long poll)' },
    {
      hop: `receipts batching window (${windows.receiptsSeconds} s)`,
      p50Ms: windows.receiptsSeconds * 1000,
      p99Ms: windows.receiptsSeconds * 1000,
      basis: 'documented: a lone record waits it all',
    },
    transport === 'sqs'
      ? assumed('receipts: delivery row CONFIRMED', delays.receiptConfirm)
      : assumed('receipts: map entry, then message CONFIRMED', delays.receiptConfirmWithMap),
  ];
}
