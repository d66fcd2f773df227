/**
 * A bare service stack around one {@link TransactionalOutbox}, as a user of `serverless-outbox/cdk` writes it,
 * for the construct tests.
 */

import { fileURLToPath } from 'node:url';
import { isDeepStrictEqual } from 'node:util';
import { type App, type Environment, Stack } from 'aws-cdk-lib';
import {
  OutboxFunction,
  type OutboxFunctionProps,
  TransactionalOutbox,
  type TransactionalOutboxProps,
} from 'serverless-outbox/cdk';
import { type PolicyStatement, resourcesOf, testApp } from '../template-queries.ts';

/** A consumer module (`createConsumerHandler`) for `addConsumer`. */
export const CONSUMER_ENTRY = fileURLToPath(new URL('./fixtures/consumer-handler.ts', import.meta.url));

/** A writer module (`outboxWriterFromEnv`) for `bindWriter`. */
export const WRITER_ENTRY = fileURLToPath(new URL('./fixtures/writer-handler.ts', import.meta.url));

/** The one queue most tests need: `orderEvents`, carrying `order.created`. */
export const ORDER_EVENTS = { orderEvents: { topics: ['order.created'] } } as const;

/** A service stack and its outbox. */
export interface OutboxService {
  readonly app: App;
  readonly stack: Stack;
  readonly outbox: TransactionalOutbox;
}

/**
 * A stack `Service` with an outbox `Outbox` built from `props` (by default one queue `orderEvents` for
 * `order.created`); `before` adds what the outbox props need first (an existing table, say). `env` pins the
 * stack's account and region, which a subscriber declared elsewhere needs.
 */
export function outboxService(
  props: Partial<TransactionalOutboxProps> = {},
  before?: (stack: Stack) => Partial<TransactionalOutboxProps>,
  env?: Environment,
): OutboxService {
  const app = testApp();
  const stack = new Stack(app, 'Service', env ? { env } : {});
  const outbox = new TransactionalOutbox(stack, 'Outbox', {
    queues: ORDER_EVENTS,
    ...props,
    ...before?.(stack),
  });
  return { app, stack, outbox };
}

/** A plain function of the service (a writer, by default). */
export function serviceFunction(
  stack: Stack,
  id: string,
  props: Partial<OutboxFunctionProps> = {},
): OutboxFunction {
  return new OutboxFunction(stack, id, { entry: WRITER_ENTRY, ...props });
}

/** The actions a set of statements allows on exactly the resource `arn` (as `stack.resolve` writes it). */
export function actionsOnArn(statements: readonly PolicyStatement[], arn: unknown): string[] {
  const actions = statements
    .filter((statement) => statement.Effect === 'Allow')
    .filter((statement) => resourcesOf(statement).some((target) => isDeepStrictEqual(target, arn)))
    .flatMap((statement) => (typeof statement.Action === 'string' ? [statement.Action] : statement.Action));
  return [...new Set(actions)].sort();
}
