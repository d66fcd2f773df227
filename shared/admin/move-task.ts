import type { AdminDeps } from './admin-deps.ts';
import { MoveTaskUnavailableError } from './admin-errors.ts';
import { integerWithin, requireActor } from './admin-input.ts';
import { queueNameOf } from './admin-queues.ts';
import { AuditAction, auditSubject } from './audit-trail.ts';
import { deadLetterRoutes, selectRoutes } from './dead-letter-routes.ts';

/** Which DLQs to hand to SQS message move tasks. */
export interface MoveTaskInput {
  /** Only this DLQ, named by its URL or name, or by its source queue's. @default every DLQ of the outbox */
  readonly queue?: string;
  /** SQS's MaxNumberOfMessagesPerSecond (1–500). @default SQS's own pace */
  readonly ratePerSecond?: number;
  readonly actor: string;
  readonly reason?: string;
}

/** A move task started for one DLQ. */
export interface StartedMoveTask {
  readonly deadLetterQueueUrl: string;
  readonly sourceQueueUrl: string;
  readonly taskHandle: string;
}

/**
 * Starts an SQS message move task per selected DLQ, moving all its messages back to their source queue inside
 * SQS (AWS only; use {@link canUseMoveTask} to choose it over `redriveDeadLetters`), and files a REDRIVE audit
 * row with the task handle. Throws {@link MoveTaskUnavailableError} when the queue backend has no move tasks.
 * @example
 * if (canUseMoveTask(request)) await startDeadLetterMoveTasks(deps, { actor, ratePerSecond: 50 });
 */
export async function startDeadLetterMoveTasks(
  deps: Pick<AdminDeps, 'audit' | 'queues' | 'topicQueues' | 'deadLetterQueues' | 'clock' | 'newId'>,
  input: MoveTaskInput,
): Promise<StartedMoveTask[]> {
  const actor = requireActor(input.actor);
  const maxPerSecond =
    input.ratePerSecond === undefined
      ? undefined
      : integerWithin('ratePerSecond', input.ratePerSecond, { min: 1, max: 500, fallback: 500 });
  const start = deps.queues.startMoveTask?.bind(deps.queues);
  if (start === undefined) throw new MoveTaskUnavailableError();
  const routes = selectRoutes(
    deadLetterRoutes(deps),
    input.queue === undefined ? {} : { queue: input.queue },
  );
  const started: StartedMoveTask[] = [];
  for (const route of routes) {
    const taskHandle = await start({
      deadLetterQueueUrl: route.deadLetterQueueUrl,
      destinationQueueUrl: route.sourceQueueUrl,
      ...(maxPerSecond === undefined ? {} : { maxPerSecond }),
    });
    await deps.audit.put({
      subject: auditSubject.deadLetterQueue(queueNameOf(route.deadLetterQueueUrl)),
      actionId: deps.newId(),
      at: deps.clock().toISOString(),
      action: AuditAction.REDRIVE,
      actor,
      reason: input.reason?.trim() ?? '',
      details: { sourceQueue: route.sourceQueueUrl, moveTask: taskHandle },
    });
    started.push({
      deadLetterQueueUrl: route.deadLetterQueueUrl,
      sourceQueueUrl: route.sourceQueueUrl,
      taskHandle,
    });
  }
  return started;
}
