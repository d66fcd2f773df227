import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { DynamoConsumerInbox } from '../aws/inbox-table.ts';
import {
  type ConsumePorts,
  type ConsumeResult,
  consumeMessage as consumeWithPorts,
  type PlanEffect,
} from '../consumer/consume-message.ts';
import type { Envelope } from '../message/envelope.ts';

/** What the consumer needs: its inbox table, and the ports and settings of everything around it. */
export interface ConsumeDeps extends Omit<ConsumePorts, 'inbox'> {
  readonly client: DynamoDBDocumentClient;
  readonly inboxTable: string;
  /** @default 30 */
  readonly inboxRetentionDays?: number;
  /**
   * The subscriber the consumer applies messages as: its inbox rows are keyed per subscriber, so consumers of two
   * subscribers may share one inbox table. @default - rows keyed by message id alone
   */
  readonly subscriber?: string;
}

/**
 * The consumer's ports from its deps: the inbox on `inboxTable`, read and written with `client`. Built for each
 * call, so a client swapped into the deps (a traced or instrumented one) is the one used.
 */
export function consumePorts(deps: ConsumeDeps): ConsumePorts {
  const { client, inboxTable, inboxRetentionDays, subscriber, ...ports } = deps;
  return {
    ...ports,
    inbox: new DynamoConsumerInbox({
      client,
      inboxTable,
      ...(inboxRetentionDays === undefined ? {} : { retentionDays: inboxRetentionDays }),
      ...(subscriber === undefined ? {} : { subscriber }),
    }),
  };
}

/**
 * Applies a message exactly once in effect: the inbox put (`attribute_not_exists(messageId)`) and the
 * business actions commit in ONE TransactWriteItems. A duplicate fails the inbox condition and is skipped;
 * a failed business condition becomes a recorded outcome rather than an endless retry; a conflict with a
 * concurrent transaction is retried here with jittered backoff; any other error is thrown so that only this
 * record is retried. Afterwards the producer's message is confirmed, with the outcome. A claim-checked payload is
 * read from S3 and verified first; a missing or altered object fails the message, which is never applied
 * without its payload.
 *
 * A message of an ordered topic (it carries `orderKey` and `seq`) is applied only right after its predecessor: its
 * transaction also moves the order key's cursor from `seq - 1` to `seq` (a rejection moves it too). One that
 * arrives early is parked (acknowledged, not confirmed) and applied, then confirmed, once its predecessor has
 * been: each apply drains the parked successors that follow it. A copy of a message at or behind the cursor
 * is a duplicate.
 *
 * The outbox's own messages (`outbox.erase`, `outbox.skip`: an operator's erase of an aggregate or skip of an
 * ordering gap, sent to a subscriber) are applied here on the inbox — parked copies deleted, the cursor moved past
 * the gap and what was parked behind it applied — recorded and confirmed like any message; `plan` never sees one.
 * @example
 * const result = await consumeMessage(envelope, planStockReservation(inventoryTable), deps);
 */
export function consumeMessage(
  received: Envelope,
  plan: PlanEffect,
  deps: ConsumeDeps,
): Promise<ConsumeResult> {
  return consumeWithPorts(received, plan, consumePorts(deps));
}
