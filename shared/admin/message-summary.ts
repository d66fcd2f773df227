import type { MessageStatus } from '../message/message-status.ts';

/** What a listing shows of a message: its bookkeeping, never its payload. */
export interface MessageSummary {
  readonly messageId: string;
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
  return {
    messageId: text('messageId'),
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
