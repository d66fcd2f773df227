import type { Logger } from '@aws-lambda-powertools/logger';
import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult, Context } from 'aws-lambda';
import type { AdminDeps } from '../admin/admin-deps.ts';
import { MoveTaskUnavailableError } from '../admin/admin-errors.ts';
import { OutboxAdmin } from '../admin/outbox-admin.ts';
import { loggableError } from '../observability/loggable-error.ts';
import type { Env } from '../settings/setting.ts';
import { type ActorPolicy, adminActor } from './admin-actor.ts';
import { adminDeps } from './admin-deps-from-env.ts';
import { type AdminCommand, parseAdminRequest } from './admin-requests.ts';
import { adminErrorAnswer, adminErrorResponse, adminJsonResponse } from './admin-responses.ts';
import { createLogger } from './create-logger.ts';
import { type EnvHandler, handlerFromEnv } from './handler-from-env.ts';

/** What the admin API's handler runs with. */
export interface AdminRequestDeps {
  readonly admin: OutboxAdmin;
  /** How a request without an IAM identity is answered. */
  readonly actors: ActorPolicy;
  /** Whether an unfiltered redrive is left to SQS's message move task (AWS only; emulators lack it). */
  readonly useMoveTask: boolean;
  readonly logger: Pick<Logger, 'info' | 'error'>;
}

/**
 * Answers one admin API request: routes it, checks its input (400 naming each bad field), names the operator
 * from the IAM identity (403 when a request has none where IAM is enforced), runs it on the operations core and
 * maps the core's refusals to their HTTP statuses (400, 404, 409, 501). Anything else is logged and answered
 * with a 500 that says nothing of the internals.
 */
export async function handleAdminRequest(
  event: APIGatewayProxyEvent,
  context: Pick<Context, 'awsRequestId'>,
  deps: AdminRequestDeps,
): Promise<APIGatewayProxyResult> {
  const parsed = parseAdminRequest(event);
  if (!parsed.ok) {
    const { statusCode, error, details, allow } = parsed.refusal;
    return adminErrorResponse(
      statusCode,
      { error, details },
      allow === undefined ? {} : { allow: allow.join(', ') },
    );
  }
  const actor = adminActor(event.requestContext?.identity, deps.actors);
  if (actor === undefined) {
    return adminErrorResponse(403, {
      error: 'the admin API answers IAM-signed requests only (its methods are AWS_IAM-authorised)',
    });
  }
  const command = parsed.command;
  try {
    const { statusCode, body } = await runCommand(command, actor, deps);
    if (command.kind !== 'list' && command.kind !== 'show' && command.kind !== 'stats') {
      deps.logger.info('admin action', { action: command.kind, actor, ...subjectOf(command), statusCode });
    }
    return adminJsonResponse(statusCode, body);
  } catch (error) {
    const answer = adminErrorAnswer(error);
    if (answer !== undefined) return answer;
    deps.logger.error('admin request failed', { action: command.kind, actor, error: loggableError(error) });
    return adminErrorResponse(500, { error: 'internal error', requestId: context.awsRequestId });
  }
}

async function runCommand(
  command: AdminCommand,
  actor: string,
  deps: AdminRequestDeps,
): Promise<{ statusCode: number; body: unknown }> {
  const { admin } = deps;
  const ok = (body: unknown) => ({ statusCode: 200, body });
  switch (command.kind) {
    case 'list':
      return ok(await admin.listMessages(command.query));
    case 'show':
      return ok(await admin.showMessage(command.messageId));
    case 'replay':
    case 'cancel': {
      const input = {
        messageId: command.messageId,
        ...(command.subscriber === undefined ? {} : { subscriber: command.subscriber }),
        reason: command.reason,
        actor,
      };
      return ok(command.kind === 'replay' ? await admin.replay(input) : await admin.cancel(input));
    }
    case 'bulkReplay':
      return ok(await admin.bulkReplay({ ...command.body, actor }));
    case 'redrive': {
      const input = { ...command.body, actor };
      if (deps.useMoveTask && admin.canUseMoveTask(input)) {
        try {
          const moveTasks = await admin.startMoveTasks({
            ...(input.queue === undefined ? {} : { queue: input.queue }),
            // SQS's MaxNumberOfMessagesPerSecond is a whole number from 1 to 500.
            ratePerSecond: Math.min(500, Math.max(1, Math.floor(input.ratePerSecond))),
            actor,
            reason: input.reason,
          });
          // Accepted: SQS moves the messages in the background.
          return { statusCode: 202, body: { moveTasks } };
        } catch (error) {
          if (!(error instanceof MoveTaskUnavailableError)) throw error;
        }
      }
      return ok(await admin.redriveDeadLetters(input));
    }
    case 'stats':
      return ok(
        await admin.stats(command.subscriber === undefined ? {} : { subscriber: command.subscriber }),
      );
    case 'erase':
      return ok(await admin.erase({ aggregateId: command.aggregateId, reason: command.reason, actor }));
    case 'skip':
      return ok(await admin.skipOrderGap({ ...command.body, actor }));
  }
}

/** What an action's log line names. */
function subjectOf(command: AdminCommand): Record<string, string> {
  if (command.kind === 'replay' || command.kind === 'cancel') {
    return {
      messageId: command.messageId,
      ...(command.subscriber === undefined ? {} : { subscriber: command.subscriber }),
    };
  }
  if (command.kind === 'erase') return { aggregateId: command.aggregateId };
  if (command.kind === 'bulkReplay') {
    return {
      topic: command.body.topic,
      ...(command.body.subscriber === undefined ? {} : { subscriber: command.body.subscriber }),
    };
  }
  if (command.kind === 'skip') return { orderKey: command.body.orderKey, seq: String(command.body.seq) };
  if (command.kind === 'redrive' && command.body.topic !== undefined) return { topic: command.body.topic };
  return {};
}

/** What the admin handler may be built with instead of its defaults. */
export interface AdminHandlerOptions {
  /** The operations core's dependencies. @default adminDeps(env): the AWS clients and `ADMIN_SETTINGS` */
  readonly deps?: (env: Env) => AdminDeps;
}

/**
 * The admin API as a Lambda handler, behind AWS_IAM-authorised methods under `/admin` of a REST API
 * (`TransactionalOutbox.addAdminApi` deploys it): list and show messages, replay and cancel one with a reason (one
 * subscriber's delivery, or every delivery the action applies to), bulk replay, DLQ redrive, stats, erase and the skip
 * of an ordering gap, each operator action audited under the IAM caller's ARN.
 *
 * Where IAM is not enforced — an emulator endpoint is set (`AWS_ENDPOINT_URL`), as in the local runtime — an
 * unsigned request acts as `local:<user>`, the user the event's identity names or else the operating-system
 * user. On AWS an unsigned request is refused with a 403. An unfiltered redrive on AWS starts SQS message move
 * tasks (202); elsewhere, and with a filter, a limit or a dry run, messages are moved by receive/send/delete.
 * @example
 * export const handler = createAdminHandler();
 */
export function createAdminHandler(
  options: AdminHandlerOptions = {},
): EnvHandler<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return handlerFromEnv((env) => {
    const admin = new OutboxAdmin((options.deps ?? adminDeps)(env));
    const logger = createLogger('outbox-admin', env);
    const onEmulator = env.AWS_ENDPOINT_URL !== undefined && env.AWS_ENDPOINT_URL !== '';
    const deps: AdminRequestDeps = {
      admin,
      actors: { allowUnsigned: onEmulator },
      useMoveTask: !onEmulator,
      logger,
    };
    return middy((event: APIGatewayProxyEvent, context: Context) =>
      handleAdminRequest(event, context, deps),
    ).use(injectLambdaContext(logger));
  });
}
