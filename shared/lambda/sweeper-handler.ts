import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { awsClientConfig, createDocumentClient } from '../aws/clients.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { type Env, readSetting } from '../settings/setting.ts';
import { inboxDeliveryCheck } from '../sweeper/inbox-delivery-check.ts';
import { DEFAULT_SWEEPER_SETTINGS, type SweeperDeps, type SweepReport, sweep } from '../sweeper/sweep.ts';
import { createLogger } from './create-logger.ts';
import { type EnvHandler, handlerFromEnv } from './handler-from-env.ts';
import { relayDeps } from './relay-handler.ts';

/**
 * The sweeper's adapters from its environment (see `SWEEPER_SETTINGS`): the relay's, plus a delivery check
 * per topic that names its consumer's inbox, and the due-shard count the writers use.
 */
export function sweeperDeps(env: Env): Omit<SweeperDeps, 'owner' | 'remainingMs'> {
  const client = createDocumentClient(awsClientConfig(env));
  const inboxes = readSetting(env, OutboxSettings.deliveryInboxes);
  const checks = new Map(
    Object.entries(inboxes).map(([topic, table]) => [topic, inboxDeliveryCheck(client, table)]),
  );
  return {
    ...relayDeps(env, { client, actor: 'sweeper' }),
    deliveryCheckFor: (topic: string) => checks.get(topic),
    sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    settings: { ...DEFAULT_SWEEPER_SETTINGS, dueShards: readSetting(env, OutboxSettings.dueShards) },
  };
}

/**
 * The scheduled sweeper as a Lambda handler: sends due retries and lost stream records, recovers expired
 * claims and reconciles unconfirmed messages until shortly before its timeout. `TransactionalOutbox`
 * deploys it on a schedule with its settings.
 * @example
 * export const handler = createSweeperHandler();
 */
export function createSweeperHandler(): EnvHandler<unknown, SweepReport> {
  return handlerFromEnv((env) => {
    const base = sweeperDeps(env);
    const logger = createLogger('outbox-sweeper', env);
    return middy(async (_event: unknown, context: Context) => {
      const report = await sweep({
        ...base,
        owner: context.awsRequestId,
        remainingMs: () => context.getRemainingTimeInMillis(),
      });
      logger.info('sweep finished', { ...report });
      return report;
    }).use(injectLambdaContext(logger));
  });
}
