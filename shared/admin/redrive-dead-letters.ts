import {
  DEAD_LETTER_ATTRIBUTES,
  type DeadLetterCause,
  readDeadLetter,
} from '../consumer/dead-letter-cause.ts';
import { MESSAGE_ATTRIBUTES } from '../relay/message-publisher.ts';
import type { AdminDeps } from './admin-deps.ts';
import { InvalidAdminRequestError } from './admin-errors.ts';
import { integerWithin, rateOf, requireActor } from './admin-input.ts';
import { type OutgoingQueueMessage, queueNameOf, type ReceivedQueueMessage } from './admin-queues.ts';
import { AuditAction, auditSubject } from './audit-trail.ts';
import { type DeadLetterRoute, deadLetterRoutes, selectRoutes } from './dead-letter-routes.ts';
import { pacer } from './pacer.ts';

/** Which dead letters to move back, how fast, and whether for real. */
export interface RedriveInput {
  /** Only messages of this topic (message attribute `topic`), and only from its queue's DLQ. */
  readonly topic?: string;
  /** Only these outbox messages (message attribute `message_id`). */
  readonly messageIds?: readonly string[];
  /** Only this DLQ, named by its URL or name, or by its source queue's. @default every DLQ of the outbox */
  readonly queue?: string;
  /** Messages moved per second at most. */
  readonly ratePerSecond: number;
  /** Report what would move and change nothing. */
  readonly dryRun: boolean;
  /** Move at most this many in all. @default no limit */
  readonly maxMessages?: number;
  readonly actor: string;
  readonly reason?: string;
  /**
   * How long each received DLQ message stays hidden while the pass holds it; longer than a pass should take.
   * @default 300
   */
  readonly visibilityTimeoutSeconds?: number;
  /** Called after each message looked at (a progress bar). */
  readonly onProgress?: (progress: RedriveProgress) => void;
}

/** Counts of a redrive, for one DLQ or in all. */
export interface RedriveCounts {
  /** Distinct DLQ messages received. */
  readonly examined: number;
  /** Chosen by the filter (all of them without one). */
  readonly matched: number;
  /** Sent to the source queue and deleted from the DLQ by this run. */
  readonly moved: number;
  /** Found already sent by an interrupted run (journal SENT): only deleted from the DLQ. */
  readonly resumed: number;
  /** Not chosen: released, left in the DLQ. */
  readonly left: number;
}

/** How far a redrive got, in the DLQ it is working on. */
export interface RedriveProgress extends RedriveCounts {
  readonly deadLetterQueueUrl: string;
}

/** A DLQ message a dry run would move. */
export interface DeadLetterInfo {
  readonly sqsMessageId: string;
  readonly messageId?: string;
  readonly topic?: string;
  /**
   * Why it is there: the consumer's reason (POISON, MAX_RECEIVES), or REDRIVE_POLICY for a message that carries
   * none (SQS moved it after maxReceiveCount receives the consumer never finished).
   */
  readonly cause: DeadLetterCause;
  /** The consumer's last error, when it dead-lettered the message itself. */
  readonly lastError?: string;
  /** Receives in the source queue, when known (see `readDeadLetter`). */
  readonly receives?: number;
}

/** What a redrive did in one DLQ. */
export interface RedriveQueueReport extends RedriveCounts {
  readonly deadLetterQueueUrl: string;
  readonly sourceQueueUrl: string;
  /** The chosen messages by why they were there (see {@link DeadLetterInfo.cause}). */
  readonly causes: Readonly<Record<string, number>>;
  /** Dry run: the messages that would move. */
  readonly wouldMove?: readonly DeadLetterInfo[];
}

/** What a redrive did. */
export interface RedriveReport extends RedriveCounts {
  readonly dryRun: boolean;
  /** The chosen messages of every DLQ by why they were there. */
  readonly causes: Readonly<Record<string, number>>;
  readonly queues: readonly RedriveQueueReport[];
}

/** State of a redrive journal row. */
export const RedriveState = { MOVING: 'MOVING', SENT: 'SENT' } as const;

/** One of the {@link RedriveState} values. */
export type RedriveState = (typeof RedriveState)[keyof typeof RedriveState];

/** SQS receives at most 10 messages per call. */
const RECEIVE_BATCH = 10;

/** Attributes the dead-lettering added, dropped from the copy sent back. */
const DEAD_LETTER_ATTRIBUTE_NAMES: ReadonlySet<string> = new Set(Object.values(DEAD_LETTER_ATTRIBUTES));

type Deps = Pick<
  AdminDeps,
  'audit' | 'queues' | 'topicQueues' | 'deadLetterQueues' | 'clock' | 'newId' | 'sleep'
>;

/**
 * Moves dead letters back to their source queue, filtered by topic or message ids, at most `ratePerSecond` a
 * second, by receive / send / delete — which works on every backend and can filter (StartMessageMoveTask can do
 * neither on an emulator; see {@link canUseMoveTask}).
 *
 * A move never loses a message and never sends one twice from a resumed run: each chosen message is journalled
 * in the audit table (subject `redrive:<dlq name>`, actionId = its SQS message id) as MOVING before the send and
 * SENT after it, and deleted from the DLQ only after that. A run interrupted anywhere and started again finds
 * the journal: MOVING → sent again, SENT → only deleted. The one window left is a crash between the send and
 * the SENT write: the resumed run sends that message a second time. The consumer's inbox absorbs it (the copy
 * has the same outbox message id, so its effect is applied once), and on a FIFO source queue SQS drops it
 * within 5 minutes (the DLQ message id is the deduplication id).
 *
 * Messages not chosen, and every message in a dry run, are held while the pass reads on and released (visibility
 * 0) as soon as it ends: released one by one, the next receive would return the same messages again and the pass
 * could never reach the rest of the queue. A dry run deletes and sends nothing (receiving raises the DLQ
 * messages' receive count, which a DLQ without a redrive policy ignores). Run one redrive of a DLQ at a time, and
 * give it a visibility timeout longer than a pass: a message another pass receives meanwhile is journalled MOVING
 * by both and may be sent by both (the inbox absorbs that copy too).
 * @example
 * await redriveDeadLetters(deps, { topic: 'order.created', ratePerSecond: 10, dryRun: false, actor });
 */
export async function redriveDeadLetters(deps: Deps, input: RedriveInput): Promise<RedriveReport> {
  const actor = requireActor(input.actor);
  const ratePerSecond = rateOf(input.ratePerSecond);
  const maxMessages = integerWithin('maxMessages', input.maxMessages, {
    min: 1,
    max: Number.MAX_SAFE_INTEGER,
    fallback: Number.POSITIVE_INFINITY,
  });
  const visibilityTimeoutSeconds = integerWithin('visibilityTimeoutSeconds', input.visibilityTimeoutSeconds, {
    min: 1,
    max: 43_200,
    fallback: 300,
  });
  const routes = selectRoutes(deadLetterRoutes(deps), {
    ...(input.queue === undefined ? {} : { queue: input.queue }),
    ...(input.topic === undefined ? {} : { topic: input.topic }),
  });
  if (input.messageIds?.length === 0) {
    throw new InvalidAdminRequestError(
      'messageIds',
      'must name at least one message (omit it to move every one)',
    );
  }
  const ids = input.messageIds === undefined ? undefined : new Set(input.messageIds);
  const chosen = (info: DeadLetterInfo) =>
    (input.topic === undefined || info.topic === input.topic) &&
    (ids === undefined || (info.messageId !== undefined && ids.has(info.messageId)));
  const run: Pass = {
    deps,
    actor,
    reason: input.reason?.trim() ?? '',
    dryRun: input.dryRun,
    chosen,
    visibilityTimeoutSeconds,
    nextSlot: pacer(ratePerSecond, deps),
    budget: { left: maxMessages },
    ...(input.onProgress === undefined ? {} : { onProgress: input.onProgress }),
  };
  const queues: RedriveQueueReport[] = [];
  for (const route of routes) {
    if (run.budget.left <= 0) break;
    const report = await redriveQueue(run, route);
    queues.push(report);
    if (!input.dryRun) {
      await deps.audit.put({
        subject: auditSubject.deadLetterQueue(queueNameOf(route.deadLetterQueueUrl)),
        actionId: deps.newId(),
        at: deps.clock().toISOString(),
        action: AuditAction.REDRIVE,
        actor,
        reason: run.reason,
        details: {
          sourceQueue: route.sourceQueueUrl,
          moved: report.moved,
          resumed: report.resumed,
          left: report.left,
          ...(input.topic === undefined ? {} : { topic: input.topic }),
          ...(input.messageIds === undefined ? {} : { messageIds: input.messageIds.length }),
        },
      });
    }
  }
  const total = (field: keyof RedriveCounts) => queues.reduce((sum, queue) => sum + queue[field], 0);
  const causes: Record<string, number> = {};
  for (const queue of queues) {
    for (const [cause, count] of Object.entries(queue.causes)) causes[cause] = (causes[cause] ?? 0) + count;
  }
  return {
    dryRun: input.dryRun,
    causes,
    examined: total('examined'),
    matched: total('matched'),
    moved: total('moved'),
    resumed: total('resumed'),
    left: total('left'),
    queues,
  };
}

/** One redrive run's settings, shared by its DLQs. */
interface Pass {
  readonly deps: Deps;
  readonly actor: string;
  readonly reason: string;
  readonly dryRun: boolean;
  readonly chosen: (info: DeadLetterInfo) => boolean;
  readonly visibilityTimeoutSeconds: number;
  readonly nextSlot: () => Promise<void>;
  /** Messages the run may still move (or report, in a dry run). */
  readonly budget: { left: number };
  readonly onProgress?: (progress: RedriveProgress) => void;
}

async function redriveQueue(run: Pass, route: DeadLetterRoute): Promise<RedriveQueueReport> {
  const { deps } = run;
  const dlq = route.deadLetterQueueUrl;
  const counts = { examined: 0, matched: 0, moved: 0, resumed: 0, left: 0 };
  const causes: Record<string, number> = {};
  const wouldMove: DeadLetterInfo[] = [];
  /** SQS message id → latest receipt handle of every message to release when the pass ends. */
  const held = new Map<string, string>();
  const seen = new Set<string>();
  try {
    while (run.budget.left > 0) {
      const batch = await deps.queues.receive(dlq, {
        maxMessages: RECEIVE_BATCH,
        visibilityTimeoutSeconds: run.visibilityTimeoutSeconds,
      });
      let fresh = 0;
      for (const [index, message] of batch.entries()) {
        // A message seen before came back after its visibility timeout: hold it again with its new receipt.
        if (seen.has(message.sqsMessageId)) {
          if (held.has(message.sqsMessageId)) held.set(message.sqsMessageId, message.receiptHandle);
          continue;
        }
        seen.add(message.sqsMessageId);
        fresh += 1;
        counts.examined += 1;
        const info = identify(message);
        if (!run.chosen(info) || run.budget.left <= 0) {
          counts.left += 1;
          held.set(message.sqsMessageId, message.receiptHandle);
        } else if (run.dryRun) {
          run.budget.left -= 1;
          counts.matched += 1;
          causes[info.cause] = (causes[info.cause] ?? 0) + 1;
          wouldMove.push(info);
          held.set(message.sqsMessageId, message.receiptHandle);
        } else {
          run.budget.left -= 1;
          counts.matched += 1;
          causes[info.cause] = (causes[info.cause] ?? 0) + 1;
          try {
            const outcome = await moveOne(run, { route, message, info });
            counts[outcome === 'RESUMED' ? 'resumed' : 'moved'] += 1;
          } catch (error) {
            // Released with the others, and so is the rest of this batch (received, hidden, not yet looked at),
            // so a run started at once sees them all; the journal tells it whether this one was sent.
            for (const unhandled of [message, ...batch.slice(index + 1)]) {
              if (
                !seen.has(unhandled.sqsMessageId) ||
                held.has(unhandled.sqsMessageId) ||
                unhandled === message
              ) {
                held.set(unhandled.sqsMessageId, unhandled.receiptHandle);
              }
            }
            throw error;
          }
        }
        run.onProgress?.({ deadLetterQueueUrl: dlq, ...counts });
      }
      // Empty, or only messages seen before: the pass has been through the whole queue.
      if (fresh === 0) break;
    }
  } finally {
    await release(deps, { queueUrl: dlq, receiptHandles: [...held.values()] });
  }
  return {
    deadLetterQueueUrl: dlq,
    sourceQueueUrl: route.sourceQueueUrl,
    ...counts,
    causes,
    ...(run.dryRun ? { wouldMove } : {}),
  };
}

/**
 * Moves one chosen DLQ message back by the journal: MOVING, send, SENT, delete. A message the journal already
 * has as SENT (an interrupted run sent it) is only deleted.
 */
async function moveOne(
  run: Pass,
  move: { route: DeadLetterRoute; message: ReceivedQueueMessage; info: DeadLetterInfo },
): Promise<'MOVED' | 'RESUMED'> {
  const { deps } = run;
  const { route, message, info } = move;
  const key = {
    subject: auditSubject.redriveJournal(queueNameOf(route.deadLetterQueueUrl)),
    actionId: message.sqsMessageId,
  };
  const journal = await deps.audit.readJournal(key);
  if (journal?.state === RedriveState.SENT) {
    await deps.queues.delete(route.deadLetterQueueUrl, message.receiptHandle);
    return 'RESUMED';
  }
  if (journal === undefined) {
    await deps.audit.writeJournal({
      ...key,
      at: deps.clock().toISOString(),
      action: AuditAction.REDRIVE,
      actor: run.actor,
      reason: run.reason,
      state: RedriveState.MOVING,
      details: {
        deadLetterQueue: route.deadLetterQueueUrl,
        sourceQueue: route.sourceQueueUrl,
        ...(info.messageId === undefined ? {} : { messageId: info.messageId }),
        ...(info.topic === undefined ? {} : { topic: info.topic }),
      },
    });
  }
  await run.nextSlot();
  await deps.queues.send(route.sourceQueueUrl, outgoing(message, route.sourceQueueUrl));
  await deps.audit.markJournal(key, RedriveState.SENT, deps.clock().toISOString());
  await deps.queues.delete(route.deadLetterQueueUrl, message.receiptHandle);
  return 'MOVED';
}

/** The copy sent back: the body byte for byte and the original attributes, without the dead-lettering ones. */
function outgoing(message: ReceivedQueueMessage, sourceQueueUrl: string): OutgoingQueueMessage {
  const attributes = Object.fromEntries(
    Object.entries(message.attributes).filter(
      ([name]) => !DEAD_LETTER_ATTRIBUTE_NAMES.has(name) && !name.startsWith('dead_letter_'),
    ),
  );
  if (!sourceQueueUrl.endsWith('.fifo')) return { body: message.body, attributes };
  const messageId = message.attributes[MESSAGE_ATTRIBUTES.messageId]?.stringValue;
  return {
    body: message.body,
    attributes,
    groupId: message.groupId ?? messageId ?? message.sqsMessageId,
    deduplicationId: message.sqsMessageId,
  };
}

/**
 * The outbox message id and topic of a DLQ message (its attributes, or else its body, the envelope), and why it is
 * there.
 */
export function identify(message: ReceivedQueueMessage): DeadLetterInfo {
  let messageId = message.attributes[MESSAGE_ATTRIBUTES.messageId]?.stringValue;
  let topic = message.attributes[MESSAGE_ATTRIBUTES.topic]?.stringValue;
  if (messageId === undefined || topic === undefined) {
    try {
      const body: unknown = JSON.parse(message.body);
      if (typeof body === 'object' && body !== null) {
        const envelope = body as { messageId?: unknown; topic?: unknown };
        if (messageId === undefined && typeof envelope.messageId === 'string') messageId = envelope.messageId;
        if (topic === undefined && typeof envelope.topic === 'string') topic = envelope.topic;
      }
    } catch {
      // Not an envelope: only a filter-less redrive moves it.
    }
  }
  const reading = readDeadLetter({
    attributes: Object.fromEntries(
      Object.entries(message.attributes).map(([name, value]) => [name, value.stringValue]),
    ),
    ...(message.receiveCount === undefined ? {} : { receiveCount: message.receiveCount }),
  });
  return {
    sqsMessageId: message.sqsMessageId,
    ...(messageId === undefined ? {} : { messageId }),
    ...(topic === undefined ? {} : { topic }),
    ...reading,
  };
}

/** Makes held messages visible again at once; one that is gone or already visible needs nothing. */
async function release(
  deps: Pick<Deps, 'queues'>,
  held: { readonly queueUrl: string; readonly receiptHandles: readonly string[] },
): Promise<void> {
  await Promise.all(
    held.receiptHandles.map(async (receiptHandle) => {
      try {
        await deps.queues.changeVisibility(held.queueUrl, receiptHandle, 0);
      } catch {
        // Its visibility timeout ends it anyway.
      }
    }),
  );
}

/**
 * Whether a redrive can be left to SQS's StartMessageMoveTask (AWS only): it moves a whole DLQ, so only
 * without a topic or message-id filter, a limit, or a dry run.
 */
export function canUseMoveTask(
  input: Pick<RedriveInput, 'topic' | 'messageIds' | 'dryRun' | 'maxMessages'>,
): boolean {
  return (
    input.topic === undefined &&
    input.messageIds === undefined &&
    input.maxMessages === undefined &&
    !input.dryRun
  );
}
