import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import { captureLambdaHandler } from '@aws-lambda-powertools/tracer/middleware';
import middy from '@middy/core';
import type { Context } from 'aws-lambda';
import { awsClientConfig, createDocumentClient, createSqsClient } from '../aws/clients.ts';
import { inboxDeliveryCheck } from '../aws/inbox-table.ts';
import { DynamoOutboxStore, readOutboxPartition } from '../aws/outbox-table.ts';
import { describeError } from '../errors.ts';
import { pageBudget } from '../observability/page-budget.ts';
import {
  backlogMetrics,
  mergeMetrics,
  mergeSubscriberMetrics,
  orderingGapMetrics,
  sendMetrics,
  subscriberBacklogMetrics,
  subscriberSendMetrics,
} from '../observability/report-metrics.ts';
import { orderedTopic } from '../ordering/ordering.ts';
import { subscriberNames } from '../outbox/subscriptions.ts';
import { OutboxSettings } from '../settings/outbox-settings.ts';
import { type Env, readSetting } from '../settings/setting.ts';
import { type Backlog, readBacklog } from '../sweeper/backlog-gauges.ts';
import { DEFAULT_SWEEPER_SETTINGS, type SweeperDeps, type SweepReport, sweep } from '../sweeper/sweep.ts';
import { createLogger } from './create-logger.ts';
import { createTracer } from './create-tracer.ts';
import { type EnvHandler, handlerFromEnv } from './handler-from-env.ts';
import { createOutboxMetrics } from './outbox-metrics-publisher.ts';
import { outboxStoreOptions, type RelayParts, relayRouting } from './relay-handler.ts';

/** The sweeper's service name when `POWERTOOLS_SERVICE_NAME` is not set. */
const SWEEPER_SERVICE = 'outbox-sweeper';

/**
 * Index pages the backlog gauges may read per run. The indexes project whole items, so reading a large backlog
 * in full every minute would cost as much as the backlog's size; past this many pages (up to 1 MB each) the
 * gauges are published as lower bounds, with a warning.
 */
export const BACKLOG_GAUGE_MAX_PAGES = 100;

/**
 * The sweeper's adapters from its environment (see `SWEEPER_SETTINGS`): the relay's, plus a delivery check
 * per topic that names its consumer's inbox, the due-shard count the writers use, and each ordered topic's gap
 * timeout.
 */
export function sweeperDeps(
  env: Env,
  parts: Pick<RelayParts, 'client' | 'sqsClient'> = {},
): Omit<SweeperDeps, 'owner' | 'remainingMs'> {
  const client = parts.client ?? createDocumentClient(awsClientConfig(env));
  const inboxes = readSetting(env, OutboxSettings.deliveryInboxes);
  const checks = new Map(
    Object.entries(inboxes).map(([topic, table]) => [topic, inboxDeliveryCheck(client, table)]),
  );
  const ordering = readSetting(env, OutboxSettings.orderedTopics);
  return {
    ...relayRouting(env, parts),
    store: new DynamoOutboxStore(outboxStoreOptions(env, { client, actor: 'sweeper' })),
    deliveryCheckFor: (topic: string) => checks.get(topic),
    orderingFor: (topic: string) => orderedTopic(ordering, topic),
    sleep: (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
    settings: {
      ...DEFAULT_SWEEPER_SETTINGS,
      dueShards: readSetting(env, OutboxSettings.dueShards),
      subscribers: subscriberNames(readSetting(env, OutboxSettings.subscriptions)),
      plainShards: Object.keys(readSetting(env, OutboxSettings.topicQueues)).length > 0,
      maxMessagesPerSecond: readSetting(env, OutboxSettings.sweeperMaxMessagesPerSecond),
    },
  };
}

/**
 * The scheduled sweeper as a Lambda handler: sends due retries and lost stream records, recovers expired
 * claims and reconciles unconfirmed messages until shortly before its timeout. Each run it publishes, per
 * topic, its sends (MessagesSent, SendFailures, RetriesScheduled, MessagesFailed), OrderingGaps of each ordered
 * topic, and the backlog gauges (BacklogPending, BacklogSentUnconfirmed, OldestPendingAgeSeconds,
 * OldestUnconfirmedAgeSeconds, FailedMessages), read from the due and attention indexes at the start of the run;
 * and of each subscriber's deliveries, per topic and over all its topics, the same gauges and its MessagesSent,
 * SendFailures and MessagesFailed. `TransactionalOutbox` deploys it on a schedule with its settings.
 * @example
 * export const handler = createSweeperHandler();
 */
export function createSweeperHandler(): EnvHandler<unknown, SweepReport> {
  return handlerFromEnv((env) => {
    const logger = createLogger(SWEEPER_SERVICE, env);
    const tracer = createTracer(SWEEPER_SERVICE, env);
    const metrics = createOutboxMetrics(env, { defaultService: SWEEPER_SERVICE, logger });
    const clients = awsClientConfig(env);
    const client = tracer.captureAWSv3Client(createDocumentClient(clients));
    const base = sweeperDeps(env, { client, sqsClient: tracer.captureAWSv3Client(createSqsClient(clients)) });
    const topics = Object.keys(readSetting(env, OutboxSettings.topicQueues));
    const subscriptions = readSetting(env, OutboxSettings.subscriptions);
    const orderedTopics = Object.keys(readSetting(env, OutboxSettings.orderedTopics));
    const outboxTable = readSetting(env, OutboxSettings.outboxTable);

    /**
     * The backlog per topic and subscriber, or undefined (with a warning) when it could not be read: the sweep goes
     * on.
     */
    const backlogGauges = async (): Promise<Backlog | undefined> => {
      const budget = pageBudget(client, BACKLOG_GAUGE_MAX_PAGES);
      try {
        const backlog = await readBacklog(
          {
            outbox: {
              readPartition: (partition, attributes) =>
                readOutboxPartition({ client: budget.client, outboxTable }, partition, attributes),
            },
            dueShards: base.settings.dueShards,
            clock: base.clock,
          },
          { topics, subscriptions },
        );
        if (budget.exhausted()) {
          logger.warn('backlog gauges are lower bounds: the indexes hold more than the per-run read budget', {
            maxPages: BACKLOG_GAUGE_MAX_PAGES,
          });
        }
        return backlog;
      } catch (error) {
        logger.warn('backlog gauges not published: the indexes could not be read', {
          error: describeError(error),
        });
        return undefined;
      }
    };

    return middy(async (_event: unknown, context: Context) => {
      const [report, backlog] = await Promise.all([
        sweep({
          ...base,
          owner: context.awsRequestId,
          remainingMs: () => context.getRemainingTimeInMillis(),
        }),
        backlogGauges(),
      ]);
      for (const { outcome, error, ...message } of report.problems) {
        // A gap names the message its successors wait for; only an operator can release it.
        logger.warn(
          outcome === 'GAP' ? 'ordering gap: successors wait for this message' : 'message not sent',
          {
            ...message,
            outcome,
            error,
          },
        );
      }
      const sent = mergeMetrics(
        sendMetrics(report.topics),
        orderingGapMetrics(report.orderingGaps, orderedTopics),
      );
      const sentBySubscriber = subscriberSendMetrics(report.topics);
      if (backlog === undefined) metrics.publish(sent, sentBySubscriber);
      else {
        metrics.publish(
          mergeMetrics(sent, backlogMetrics(backlog)),
          mergeSubscriberMetrics(sentBySubscriber, subscriberBacklogMetrics(backlog)),
        );
      }
      const { problems: _problems, ...summary } = report;
      logger.info('sweep finished', summary);
      return report;
    })
      .use(captureLambdaHandler(tracer, { captureResponse: false }))
      .use(injectLambdaContext(logger));
  });
}
