/**
 * One message as the console shows it: the admin core's `show` (the record, each subscriber's delivery with its
 * history, the audit rows), the neighbouring messages of its order key, and — on demand — a claim-checked payload
 * read back from S3.
 */
import type { AdminDeps } from '../../admin/admin-deps.ts';
import { InvalidAdminRequestError } from '../../admin/admin-errors.ts';
import { OutboxAdmin } from '../../admin/outbox-admin.ts';
import type { MessageDetails } from '../../admin/show-message.ts';
import { CLAIM_CHECK_PREFIX, checkOut, claimCheckOf } from '../../claim-check/claim-check-reference.ts';
import type { ClaimCheckStore } from '../../claim-check/claim-check-store.ts';
import type { Envelope } from '../../message/envelope.ts';
import { neighbour, type SequencedMessage } from './ordering-gaps.ts';

/** One sequence the message is in (a subscriber's own, for a topic with subscribers), and its neighbours there. */
export interface SequenceNeighbours {
  readonly orderKey: string;
  readonly seq: number;
  readonly subscriber?: string;
  readonly previous?: SequencedMessage;
  readonly next?: SequencedMessage;
}

/** The message page's data. */
export interface MessagePage extends MessageDetails {
  /** For an ordered topic: the messages before and after it in each of its sequences. */
  readonly sequences: readonly SequenceNeighbours[];
  /** Where its payload is, when it is claim-checked (the payload itself is read on demand). */
  readonly claimCheck?: { readonly bucket: string; readonly key: string; readonly size: number };
}

/**
 * The message `messageId` with its deliveries, history, audit rows and order-key neighbours. Throws the core's
 * `MessageNotFoundError` (404) when there is none.
 * @example
 * const page = await readMessagePage(deps, '01J…');
 */
export async function readMessagePage(deps: AdminDeps, messageId: string): Promise<MessagePage> {
  const details = await new OutboxAdmin(deps).showMessage(messageId);
  const rows = details.deliveries?.map((delivery) => delivery.delivery) ?? [details.message];
  const sequences = await Promise.all(
    rows
      .filter((row) => typeof row.orderKey === 'string' && typeof row.seq === 'number')
      .map(async (row): Promise<SequenceNeighbours> => {
        const orderKey = String(row.orderKey);
        const seq = Number(row.seq);
        const [previous, next] = await Promise.all([
          neighbour(deps, { orderKey, seq: seq - 1 }),
          neighbour(deps, { orderKey, seq, after: true }),
        ]);
        return {
          orderKey,
          seq,
          ...(typeof row.subscriber === 'string' ? { subscriber: row.subscriber } : {}),
          ...(previous === undefined ? {} : { previous }),
          ...(next === undefined ? {} : { next }),
        };
      }),
  );
  const reference = referenceOf(details.message);
  return {
    ...details,
    sequences,
    ...(reference === undefined
      ? {}
      : { claimCheck: { bucket: reference.bucket, key: reference.key, size: reference.size } }),
  };
}

/**
 * The claim-checked payload of message `messageId`, read from S3 and checked (size and SHA-256) as a consumer
 * checks it. Only the object the claim check wrote for this message is read: its key must be under
 * `claim-check/<messageId>/`. Throws `InvalidAdminRequestError` (400) for a message whose payload is inline.
 * @example
 * const { payload } = await readClaimCheckedPayload(deps, store, '01J…');
 */
export async function readClaimCheckedPayload(
  deps: AdminDeps,
  store: ClaimCheckStore,
  messageId: string,
): Promise<{ readonly payload: unknown }> {
  const details = await new OutboxAdmin(deps).showMessage(messageId);
  const envelope = envelopeOf(details.message);
  const reference = claimCheckOf(envelope);
  if (reference === undefined) {
    throw new InvalidAdminRequestError('messageId', `${messageId} carries its payload inline`);
  }
  if (!reference.key.startsWith(`${CLAIM_CHECK_PREFIX}${envelope.messageId}/`)) {
    throw new InvalidAdminRequestError(
      'messageId',
      `${messageId} refers to s3://${reference.bucket}/${reference.key}, which is not its own claim-checked payload`,
    );
  }
  const body = await store.get(reference);
  return { payload: checkOut(envelope, reference, body).payload };
}

/** The claim-check reference of a stored message; `undefined` when its payload is inline or unreadable. */
function referenceOf(message: Readonly<Record<string, unknown>>) {
  try {
    return claimCheckOf(envelopeOf(message));
  } catch {
    return undefined;
  }
}

/** A stored message read as the envelope it was written from. */
function envelopeOf(message: Readonly<Record<string, unknown>>): Envelope {
  return {
    ...(message as unknown as Envelope),
    headers: (typeof message.headers === 'object' && message.headers !== null
      ? message.headers
      : {}) as Envelope['headers'],
  };
}
