import { Lazy, Stack } from 'aws-cdk-lib';
import type * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import * as events from 'aws-cdk-lib/aws-events';
import * as targets from 'aws-cdk-lib/aws-events-targets';
import type * as nodejs from 'aws-cdk-lib/aws-lambda-nodejs';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import { OUTBOX_KEYS } from '../../shared/aws/outbox-table.ts';
import { OutboxSettings, SWEEPER_SETTINGS } from '../../shared/settings/outbox-settings.ts';
import { SCHEDULE_DEFAULTS, SWEEPER_DEFAULTS } from './defaults.ts';
import { settingsEnvironment } from './function-settings.ts';
import { grantKeyUse } from './key-grants.ts';
import { OutboxFunction } from './outbox-function.ts';
import type { OutboxScope } from './outbox-scope.ts';
import { SHIPPED_ENTRIES } from './shipped-entries.ts';
import { grantOnTable, grantQueryOnIndexes, grantSendMessage } from './table-grants.ts';
import { markOutboxRole, OutboxResourceRole } from './template-metadata.ts';

/** What the sweeper is built from. */
export interface OutboxSweeperOptions {
  readonly table: dynamodb.ITable;
  /** Every topic queue the sweeper sends to. */
  readonly queues: Iterable<sqs.IQueue>;
  /** Whether a topic is ordered: the sweeper then looks up predecessors in the byOrderKey index. */
  readonly ordered: boolean;
  /** Props merged over the sweeper function's defaults. */
  readonly functionProps?: Partial<nodejs.NodejsFunctionProps>;
  /** @default events.Schedule.rate(SWEEPER_DEFAULTS.scheduleRate) */
  readonly schedule?: events.Schedule;
  /** @default OutboxSettings.sweeperMaxMessagesPerSecond.defaultValue */
  readonly maxMessagesPerSecond?: number;
}

/**
 * The scheduled sweeper of an outbox (`Sweeper`, run by `SweeperSchedule`): the shipped sweeper handler with
 * `SWEEPER_SETTINGS`, which sends due retries and lost stream records, recovers expired claims and reconciles
 * unconfirmed messages with the inboxes of the consumers that {@link OutboxSweeper.reconcileWith} names.
 */
export class OutboxSweeper {
  /** The sweeper function. */
  public readonly function: OutboxFunction;
  /** The EventBridge rule that runs it. */
  public readonly schedule: events.Rule;

  /** Topic → the inbox table name the sweeper checks (DELIVERY_INBOXES, resolved at synth). */
  readonly #deliveryInboxes = new Map<string, string>();

  constructor(outbox: OutboxScope, options: OutboxSweeperOptions) {
    const { scope } = outbox;
    const maxMessagesPerSecond =
      options.maxMessagesPerSecond ?? OutboxSettings.sweeperMaxMessagesPerSecond.defaultValue ?? 1;
    this.function = new OutboxFunction(scope, 'Sweeper', {
      timeout: SWEEPER_DEFAULTS.timeout,
      memorySize: SWEEPER_DEFAULTS.memorySize,
      logGroupRemovalPolicy: outbox.removalPolicy,
      description:
        'Sends due retries and lost stream records, recovers expired claims, reconciles unconfirmed messages',
      ...options.functionProps,
      ...(outbox.senderRolePath === undefined ? {} : { rolePath: outbox.senderRolePath }),
      entry: SHIPPED_ENTRIES.sweeper,
      handler: 'handler',
      serviceName: 'outbox-sweeper',
      metricsNamespace: outbox.metricsNamespace,
      environment: {
        ...options.functionProps?.environment,
        ...settingsEnvironment(
          SWEEPER_SETTINGS,
          {
            ...outbox.settings,
            sweeperMaxMessagesPerSecond: { value: maxMessagesPerSecond, prop: 'sweeperMaxMessagesPerSecond' },
            // Consumers added later register their inboxes, so this is resolved at synth.
            deliveryInboxes: {
              text: Lazy.string({
                produce: () => Stack.of(scope).toJsonString(Object.fromEntries(this.#deliveryInboxes)),
              }),
            },
          },
          outbox.report,
        ),
      },
    });
    const sweeper = this.function;
    markOutboxRole(sweeper, OutboxResourceRole.SWEEPER);
    const timeout = options.functionProps?.timeout ?? SWEEPER_DEFAULTS.timeout;
    if (timeout.toSeconds() < SWEEPER_DEFAULTS.minimumTimeout.toSeconds()) {
      outbox.report(
        `the sweeper's timeout must be at least ${SWEEPER_DEFAULTS.minimumTimeout.toSeconds()} s ` +
          `(a run stops 5 s before it), got ${timeout.toSeconds()} s`,
      );
    }
    // Reads the due index and claims, marks, requeues and releases with conditional updates; counts FAILED
    // messages in the attention index for its gauge. No Scan, PutItem or DeleteItem on the outbox, and GetItem
    // only with ordering: it looks up an ordered message's predecessors in the keys-only byOrderKey index and
    // reads each one's status.
    grantQueryOnIndexes(options.table, sweeper, [
      OUTBOX_KEYS.dueIndex.name,
      OUTBOX_KEYS.attentionIndex.name,
      ...(options.ordered ? [OUTBOX_KEYS.orderIndex.name] : []),
    ]);
    grantOnTable(options.table, sweeper, [
      'dynamodb:UpdateItem',
      ...(options.ordered ? ['dynamodb:GetItem'] : []),
    ]);
    for (const queue of options.queues) grantSendMessage(queue, sweeper);
    grantKeyUse(outbox.encryptionKey, sweeper, 'write');
    this.schedule = new events.Rule(scope, 'SweeperSchedule', {
      description: 'Runs the outbox sweeper',
      schedule: options.schedule ?? events.Schedule.rate(SWEEPER_DEFAULTS.scheduleRate),
      targets: [new targets.LambdaFunction(sweeper, SCHEDULE_DEFAULTS)],
    });
  }

  /**
   * Makes `inboxTable` the sweeper's proof of delivery for `topics`: a SENT message of one of them is CONFIRMED
   * when the inbox has its row, and resent otherwise.
   */
  reconcileWith(inboxTable: dynamodb.ITable, topics: readonly string[]): void {
    for (const topic of topics) this.#deliveryInboxes.set(topic, inboxTable.tableName);
    // Reconciliation only asks whether the inbox has the message.
    grantOnTable(inboxTable, this.function, ['dynamodb:GetItem']);
  }
}
