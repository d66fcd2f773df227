import { BatchProcessor, EventType, processPartialResponse } from '@aws-lambda-powertools/batch';
import type { Logger } from '@aws-lambda-powertools/logger';
import type { Context, SQSBatchResponse, SQSEvent, SQSRecord } from 'aws-lambda';
import { parseEnvelope } from '../message/envelope';
import { type ConsumeDeps, consumeMessage, type PlanEffect } from './consume-message';

/**
 * The consumer function's core: consumes each SQS record exactly once in effect and reports the records
 * that failed transiently as partial batch failures, so only they are redelivered.
 */
export async function consumeSqsBatch(
  event: SQSEvent,
  context: Context,
  plan: PlanEffect,
  deps: ConsumeDeps,
  logger: Pick<Logger, 'info' | 'warn'>,
): Promise<SQSBatchResponse> {
  const recordHandler = async (record: SQSRecord) => {
    const message = parseEnvelope(JSON.parse(record.body));
    const result = await consumeMessage(message, plan, deps);
    logger.info('consumed message', { messageId: message.messageId, topic: message.topic, ...result });
    return result;
  };
  // A processor per batch: it holds the batch's successes and failures.
  return processPartialResponse(event, recordHandler, new BatchProcessor(EventType.SQS), {
    context,
    // Report every record as failed rather than throwing, so the runtime sees one uniform response.
    throwOnFullBatchFailure: false,
  });
}
