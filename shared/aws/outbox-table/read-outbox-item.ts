import * as z from 'zod/mini';
import { InvalidMessageError } from '../../errors.ts';
import { unscopedKeyOf } from '../../message/delivery-id.ts';
import { messageIdSchema } from '../../message/envelope.ts';
import { MessageStatus } from '../../message/message-status.ts';
import type { OutboxItem } from '../../outbox/outbox-item.ts';
import { subscriberNameSchema } from '../../receipts/receipt.ts';
import { safeParse } from '../../validation/safe-parse.ts';

/**
 * An outbox item as stored, read tolerantly: items written by older versions or other writers may lack
 * bookkeeping fields (`attempts`, `resends`, `refusals`, `updatedAt`), which read as their defaults — the same defaults the
 * update expressions apply with `if_not_exists`. Fields the relay needs to send the message must be there.
 */
const storedItemSchema = z
  .looseObject({
    // A delivery row's key is `<messageId>#<subscriber>`: the message id it carries is checked below.
    messageId: z.string().check(z.minLength(1)),
    subscriber: z.optional(subscriberNameSchema),
    topic: z.string().check(z.minLength(1)),
    aggregateId: z.string().check(z.minLength(1), z.maxLength(128)),
    payload: z.unknown(),
    headers: z._default(z.record(z.string(), z.string()), {}),
    createdAt: z.string().check(z.minLength(1)),
    schemaVersion: z._default(z.number().check(z.int(), z.minimum(1)), 1),
    status: z.enum(Object.values(MessageStatus) as [MessageStatus, ...MessageStatus[]]),
    attempts: z._default(z.number().check(z.int(), z.minimum(0)), 0),
    resends: z._default(z.number().check(z.int(), z.minimum(0)), 0),
    refusals: z._default(z.number().check(z.int(), z.minimum(0)), 0),
    updatedAt: z._default(z.string(), ''),
  })
  .check(
    z.refine((item) => messageIdSchema.safeParse(carriedMessageId(item)).success, {
      error: 'must be a ULID (with #<subscriber> on a delivery row)',
      path: ['messageId'],
    }),
    z.refine((item) => item.payload !== undefined, { error: 'has no payload', path: ['payload'] }),
  );

/** The message id a stored row carries; undefined when its key is not one of its subscriber's. */
function carriedMessageId(item: { readonly messageId: string; readonly subscriber?: string | undefined }) {
  try {
    return unscopedKeyOf(item.messageId, item.subscriber);
  } catch {
    return undefined;
  }
}

/**
 * The outbox item in `raw` (an unmarshalled DynamoDB item) with missing bookkeeping fields defaulted, or an
 * {@link InvalidMessageError} naming the first field that makes it unsendable.
 */
export function readOutboxItem(raw: Readonly<Record<string, unknown>>): OutboxItem {
  const parsed = safeParse(storedItemSchema, raw);
  if (parsed.success) return parsed.data as OutboxItem;
  const issue = parsed.error.issues[0];
  const path = (issue?.path ?? []).map((key) => String(key)).join('.') || '(item)';
  throw new InvalidMessageError(path, issue?.message ?? 'unreadable');
}
