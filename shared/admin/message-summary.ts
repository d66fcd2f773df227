import type { MessageStatus } from '../message/message-status.ts';
import { messageIdOf } from '../outbox/outbox-item.ts';

/**
 * What a listing shows of a message, or of one subscriber's delivery of it: its bookkeeping, never its payload.
 */
export interface MessageSummary {
  /** The message's own id (for a delivery too: the id replay, cancel and show take, with `subscriber`). */
  readonly messageId: string;
  /** The subscriber whose delivery this is; absent for a message delivered to one queue. */
  readonly subscriber?: string;
  readonly topic: string;
  readonly aggregateId: string;
  readonly status: MessageStatus;
  readonly attempts: number;
  readonly resends: number;
  readonly lastError?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
  readonly outcome?: string;
}

/** The attributes a summary is read from: a listing projects only these, so the payload never leaves DynamoDB. */
export const SUMMARY_ATTRIBUTES = [
  'messageId',
  'subscriber',
  'topic',
  'aggregateId',
  'status',
  'attempts',
  'resends',
  'lastError',
  'createdAt',
  'updatedAt',
  'outcome',
] as const;

/** A ProjectionExpression of `attributes`, every name a placeholder (`status` is a reserved word). */
export function projectionOf(attributes: readonly string[]): {
  readonly ProjectionExpression: string;
  readonly ExpressionAttributeNames: Record<string, string>;
} {
  const names = Object.fromEntries(attributes.map((name) => [`#p_${name}`, name]));
  return { ProjectionExpression: Object.keys(names).join(', '), ExpressionAttributeNames: names };
}

/**
 * The summary of a stored item, read tolerantly: an item written by another tool or damaged still lists, with
 * its missing fields empty, so one odd item never hides the page.
 */
export function summarizeMessage(item: Readonly<Record<string, unknown>>): MessageSummary {
  const text = (name: string) => (typeof item[name] === 'string' ? (item[name] as string) : '');
  const count = (name: string) => (typeof item[name] === 'number' ? (item[name] as number) : 0);
  const subscriber = typeof item.subscriber === 'string' ? item.subscriber : undefined;
  return {
    messageId: messageIdOfRow(text('messageId'), subscriber),
    ...(subscriber === undefined ? {} : { subscriber }),
    topic: text('topic'),
    aggregateId: text('aggregateId'),
    status: text('status') as MessageStatus,
    attempts: count('attempts'),
    resends: count('resends'),
    ...(typeof item.lastError === 'string' ? { lastError: item.lastError } : {}),
    createdAt: text('createdAt'),
    updatedAt: text('updatedAt'),
    ...(typeof item.outcome === 'string' ? { outcome: item.outcome } : {}),
  };
}

/**
 * The message's own id of a row keyed `key` (a delivery's key without its subscriber); the key itself when it does
 * not fit its subscriber (a damaged row), so that one odd row still lists.
 */
export function messageIdOfRow(key: string, subscriber: string | undefined): string {
  try {
    return messageIdOf({ messageId: key, ...(subscriber === undefined ? {} : { subscriber }) });
  } catch {
    return key;
  }
}
