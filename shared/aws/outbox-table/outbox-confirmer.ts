import { ConditionalCheckFailedException } from '@aws-sdk/client-dynamodb';
import { type DynamoDBDocumentClient, UpdateCommand } from '@aws-sdk/lib-dynamodb';
import { unmarshall } from '@aws-sdk/util-dynamodb';
import { MessageStatus } from '../../message/message-status.ts';
import { DEFAULT_RETENTION_DAYS } from '../../outbox/outbox-defaults.ts';
import type { ConfirmOutcome, OutboxStore } from '../../outbox/outbox-store.ts';
import {
  appliedAfterCancelUpdate,
  confirmUpdate,
  type OutboxUpdate,
  onlyOfTopics,
} from './transition-updates.ts';

/** What a conditional update of one message did: applied, or refused with the item as it stands. */
export type UpdateResult =
  | { readonly applied: true }
  | { readonly applied: false; readonly current: Record<string, unknown> | undefined };

/**
 * One conditional update of the outbox table. A failed condition is a lost race or an already-advanced
 * message: an expected outcome, returned with the item as it stands, not an error.
 */
export async function conditionalUpdate(
  target: { readonly client: DynamoDBDocumentClient; readonly tableName: string },
  update: OutboxUpdate,
): Promise<UpdateResult> {
  try {
    await target.client.send(new UpdateCommand({ TableName: target.tableName, ...update }));
    return { applied: true };
  } catch (error) {
    if (error instanceof ConditionalCheckFailedException) {
      return { applied: false, current: error.Item === undefined ? undefined : unmarshall(error.Item) };
    }
    throw error;
  }
}

/** Settings of {@link DynamoOutboxConfirmer}. */
export interface DynamoOutboxConfirmerOptions {
  readonly client: DynamoDBDocumentClient;
  readonly tableName: string;
  /** Days a confirmed message is kept before TTL archives it. @default 30 */
  readonly retentionDays?: number;
  /** Who confirms, recorded in the history entry: `consumer`. */
  readonly actor?: string;
}

/**
 * The confirmation of the outbox on its own: what a consumer holds. Apart from {@link DynamoOutboxStore}, whose
 * relay and sweeper moves a consumer never makes, so a consumer's bundle carries only this update.
 */
export class DynamoOutboxConfirmer implements Pick<OutboxStore, 'confirm'> {
  readonly #options: DynamoOutboxConfirmerOptions;

  constructor(options: DynamoOutboxConfirmerOptions) {
    this.#options = options;
  }

  /** @inheritdoc */
  confirm(messageId: string, now: Date, outcome?: string): Promise<ConfirmOutcome> {
    return confirmMessage(this.#options, { messageId, now, ...(outcome === undefined ? {} : { outcome }) });
  }
}

/**
 * PENDING or SENT → CONFIRMED with the consumer's outcome; a message an operator cancelled while a copy was in
 * flight is recorded as applied after cancel. Conditional on its status, so a duplicate confirmation changes
 * nothing and says ALREADY_CONFIRMED.
 */
export async function confirmMessage(
  options: DynamoOutboxConfirmerOptions,
  at: {
    readonly messageId: string;
    readonly now: Date;
    readonly outcome?: string;
    /** Confirm only a message of one of these topics; another is NOT_FOUND (it has no such delivery). */
    readonly topics?: readonly string[];
  },
): Promise<ConfirmOutcome> {
  const { topics, ...confirmed } = at;
  if (topics !== undefined && topics.length === 0) return 'NOT_FOUND';
  const confirmation = {
    ...confirmed,
    retentionDays: options.retentionDays ?? DEFAULT_RETENTION_DAYS,
    ...(options.actor === undefined ? {} : { by: options.actor }),
  };
  const restricted = (update: OutboxUpdate) => (topics === undefined ? update : onlyOfTopics(update, topics));
  // An operator may replay a cancelled message between the two updates below; a few rounds settle it.
  for (let round = 0; round < 3; round += 1) {
    const result = await conditionalUpdate(options, restricted(confirmUpdate(confirmation)));
    if (result.applied) return 'CONFIRMED';
    if (result.current === undefined) return 'NOT_FOUND';
    if (topics !== undefined && !topics.includes(String(result.current.topic))) return 'NOT_FOUND';
    if (result.current.status === MessageStatus.CONFIRMED) return 'ALREADY_CONFIRMED';
    if (result.current.status !== MessageStatus.CANCELLED) return 'NOT_CONFIRMABLE';
    const late = await conditionalUpdate(options, restricted(appliedAfterCancelUpdate(confirmation)));
    // Still CANCELLED but not applied: the late delivery was recorded before (a redelivered copy).
    if (late.applied || late.current?.status === MessageStatus.CANCELLED) return 'APPLIED_AFTER_CANCEL';
    if (late.current === undefined) return 'NOT_FOUND';
  }
  return 'NOT_CONFIRMABLE';
}
