import { z } from 'zod';
import { InvalidMessageError } from '../errors.ts';
import { messageIdSchema } from '../message/envelope.ts';
import { MessageStatus } from '../message/message-status.ts';
import type { OutboxItem } from './outbox-item.ts';

/**
 * An outbox item as stored, read tolerantly: items written by older versions or other writers may lack
 * bookkeeping fields (`attempts`, `resends`, `updatedAt`), which read as their defaults — the same defaults the
 * update expressions apply with `if_not_exists`. Fields the relay needs to send the message must be there.
 */
const storedItemSchema = z
  .looseObject({
    messageId: messageIdSchema,
    topic: z.string().min(1),
    aggregateId: z.string().min(1).max(128),
    payload: z.unknown(),
    headers: z.record(z.string(), z.string()).default({}),
    createdAt: z.string().min(1),
    schemaVersion: z.number().int().min(1).default(1),
    status: z.enum(Object.values(MessageStatus) as [MessageStatus, ...MessageStatus[]]),
    attempts: z.number().int().min(0).default(0),
    resends: z.number().int().min(0).default(0),
    updatedAt: z.string().default(''),
  })
  .refine((item) => item.payload !== undefined, { message: 'has no payload', path: ['payload'] });

/**
 * The outbox item in `raw` (an unmarshalled DynamoDB item) with missing bookkeeping fields defaulted, or an
 * {@link InvalidMessageError} naming the first field that makes it unsendable.
 */
export function readOutboxItem(raw: Readonly<Record<string, unknown>>): OutboxItem {
  const parsed = storedItemSchema.safeParse(raw);
  if (parsed.success) return parsed.data as OutboxItem;
  const issue = parsed.error.issues[0];
  const path = (issue?.path ?? []).map((key) => String(key)).join('.') || '(item)';
  throw new InvalidMessageError(path, issue?.message ?? 'unreadable');
}
