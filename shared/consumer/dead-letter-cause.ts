/** Attributes the consumer adds to a message it dead-letters itself. */
export const DEAD_LETTER_ATTRIBUTES = {
  reason: 'dead_letter_reason',
  lastError: 'last_error',
  receiveCount: 'receive_count',
  sourceQueue: 'source_queue',
} as const;

/**
 * Why a message is in a dead-letter queue. POISON and MAX_RECEIVES are the consumer's own reasons (it sent the
 * message there with `dead_letter_reason`); REDRIVE_POLICY is a message that carries none: SQS moved it itself,
 * by the source queue's redrive policy, after maxReceiveCount receives that each ended unacknowledged with no
 * verdict from the consumer — invocations stopped at their timeout or crashed, or a consumer without failure
 * handling.
 */
export const DeadLetterCause = {
  POISON: 'POISON',
  MAX_RECEIVES: 'MAX_RECEIVES',
  REDRIVE_POLICY: 'REDRIVE_POLICY',
} as const;

/** One of the {@link DeadLetterCause} values (or a reason another consumer version wrote). */
export type DeadLetterCause = (typeof DeadLetterCause)[keyof typeof DeadLetterCause] | (string & {});

/** A dead letter as read: its string attributes, and SQS's receive count when it was received. */
export interface DeadLetterSeen {
  readonly attributes: Readonly<Record<string, string | undefined>>;
  /** SQS's ApproximateReceiveCount of this receive. */
  readonly receiveCount?: number;
}

/** What a dead letter says about how it got there. */
export interface DeadLetterReading {
  readonly cause: DeadLetterCause;
  /** The consumer's last error; only on a message the consumer dead-lettered. */
  readonly lastError?: string;
  /**
   * Receives of the message in its source queue, when known: the consumer's `receive_count` attribute, or, for a
   * message the redrive policy moved, SQS's receive count, which SQS carries into the dead-letter queue (at least
   * the source queue's maxReceiveCount, plus this receive and any earlier one from the dead-letter queue).
   */
  readonly receives?: number;
}

/**
 * Reads why a dead letter is there from its attributes (see {@link DeadLetterCause}). Pure.
 * @example
 * readDeadLetter({ attributes: { topic: 'order.created' }, receiveCount: 6 });
 * // { cause: 'REDRIVE_POLICY', receives: 6 }
 */
export function readDeadLetter(letter: DeadLetterSeen): DeadLetterReading {
  const reason = letter.attributes[DEAD_LETTER_ATTRIBUTES.reason];
  if (reason === undefined || reason === '') {
    return {
      cause: DeadLetterCause.REDRIVE_POLICY,
      ...(letter.receiveCount === undefined ? {} : { receives: letter.receiveCount }),
    };
  }
  const lastError = letter.attributes[DEAD_LETTER_ATTRIBUTES.lastError];
  const receives = Number(letter.attributes[DEAD_LETTER_ATTRIBUTES.receiveCount]);
  return {
    cause: reason,
    ...(lastError === undefined ? {} : { lastError }),
    ...(Number.isInteger(receives) && receives > 0 ? { receives } : {}),
  };
}
