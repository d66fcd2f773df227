import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { SQSBatchResponse, SQSEvent } from 'aws-lambda';
import { awsClientConfig, createDocumentClient } from '../aws/clients.ts';
import { DynamoDeliveryConfirmer } from '../aws/outbox-table/delivery-confirmer.ts';
import { describeError, InvalidReceiptError } from '../errors.ts';
import type { LogSink } from '../observability/log-sink.ts';
import { topicsBySubscriber } from '../outbox/subscriptions.ts';
import {
  applyReceipts,
  countReceipts,
  type DeliveryConfirmer,
  type ReceiptCounts,
} from '../receipts/apply-receipts.ts';
import { readReceiptBody } from '../receipts/receipt.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { readSetting } from '../settings/setting.ts';
import { createLogger } from './create-logger.ts';
import { createTracer } from './create-tracer.ts';
import { type EnvHandler, handlerFromEnv } from './handler-from-env.ts';

/** What one batch of receipt messages did. */
export interface ReceiptBatchReport {
  readonly counts: ReceiptCounts;
  /** Receipts that could not be read (dropped: their messages are resent by the sweeper, never lost). */
  readonly unreadable: number;
}

/**
 * Applies the receipts of an SQS batch of the producer's receipt queue. A record with a receipt whose apply failed
 * (throttled, a network error) is reported failed, so SQS redelivers it: its other receipts apply again as
 * duplicates, which changes nothing. A body or receipt that cannot be read is logged and dropped, never retried
 * (it would never become readable); its message stays SENT until the sweeper resends it, and the subscriber's
 * inbox answers the copy with a fresh receipt.
 */
export async function applyReceiptEvent(
  event: SQSEvent,
  deps: { readonly confirmer: DeliveryConfirmer; readonly logger: LogSink },
): Promise<{ readonly response: SQSBatchResponse; readonly report: ReceiptBatchReport }> {
  const failures: { itemIdentifier: string }[] = [];
  const results = [];
  let unreadable = 0;
  for (const record of event.Records ?? []) {
    let read: ReturnType<typeof readReceiptBody>;
    try {
      read = readReceiptBody(record.body);
    } catch (error) {
      if (!(error instanceof InvalidReceiptError)) throw error;
      unreadable += 1;
      deps.logger.warn('unreadable receipt body dropped', {
        sqsMessageId: record.messageId,
        error: error.message,
      });
      continue;
    }
    for (const invalid of read.invalid) {
      unreadable += 1;
      deps.logger.warn('unreadable receipt dropped', {
        sqsMessageId: record.messageId,
        error: invalid.message,
      });
    }
    const applied = await applyReceipts(read.receipts, deps.confirmer);
    results.push(...applied);
    for (const result of applied) {
      const { messageId, subscriber } = result.receipt;
      if ('error' in result) {
        deps.logger.warn('receipt not applied', {
          messageId,
          subscriber,
          error: describeError(result.error),
        });
      } else if (result.outcome === 'NOT_FOUND' || result.outcome === 'NOT_CONFIRMABLE') {
        // A subscriber not declared for the message's topic, an archived message, or one an operator moved on.
        deps.logger.warn('receipt matches no delivery', { messageId, subscriber, outcome: result.outcome });
      }
    }
    if (applied.some((result) => 'error' in result)) failures.push({ itemIdentifier: record.messageId });
  }
  return {
    response: { batchItemFailures: failures },
    report: { counts: countReceipts(results), unreadable },
  };
}

/**
 * The producer's receipts function as a Lambda handler: reads its receipt queue and confirms each receipt's
 * delivery in the outbox (see {@link applyReceiptEvent}); the only function that writes a confirmation there
 * for the consumers that send receipts.
 * @example
 * export const handler = createReceiptsHandler();
 */
export function createReceiptsHandler(): EnvHandler<SQSEvent, SQSBatchResponse> {
  return handlerFromEnv((env) => {
    const logger = createLogger(RECEIPTS_SERVICE, env);
    const tracer = createTracer(RECEIPTS_SERVICE, env);
    const confirmer = new DynamoDeliveryConfirmer({
      client: tracer.captureAWSv3Client(createDocumentClient(awsClientConfig(env))),
      tableName: readSetting(env, OutboxSettings.outboxTable),
      retentionDays: readSetting(env, OutboxSettings.retentionDays),
      subscribers: topicsBySubscriber(readSetting(env, OutboxSettings.subscriptions)),
    });
    return middy(async (event: SQSEvent) => {
      const { response, report } = await applyReceiptEvent(event, { confirmer, logger });
      logger.info('receipts applied', { ...report.counts, unreadable: report.unreadable });
      return response;
    })
      .use(captureLambdaHandler(tracer, { captureResponse: false }))
      .use(injectLambdaContext(logger));
  });
}

/** The receipts function's service name when `POWERTOOLS_SERVICE_NAME` is not set. */
const RECEIPTS_SERVICE = 'outbox-receipts';
