import type { RemovalPolicy } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import type { Construct } from 'constructs';
import type { ReportProblem, SettingValues } from './function-settings.ts';

/**
 * What the parts of a `TransactionalOutbox` (its relay, sweeper, consumers, admin API, tables) share. Each part
 * creates its resources directly in `scope`, the outbox itself, and not in a construct of its own: so every
 * resource keeps the construct path, and with it the logical id, it has always had (a new logical id would
 * replace a table or a queue in a deployed stack, and lose what it holds).
 */
export interface OutboxScope {
  /** The outbox construct. */
  readonly scope: Construct;
  /** Reports a bad prop; the outbox fails `cdk synth` with it. */
  readonly report: ReportProblem;
  /** CloudWatch namespace of every function's metrics. */
  readonly metricsNamespace: string;
  /** What happens to the tables, buckets and log groups the outbox creates when they leave the stack. */
  readonly removalPolicy: RemovalPolicy | undefined;
  /** The customer-managed key of what the outbox creates, when it has one. */
  readonly encryptionKey: kms.IKey | undefined;
  /**
   * The IAM path of the roles that send to subscribers' queues (the relay's and the sweeper's), which each
   * subscriber's queue policy allows; `undefined` when the outbox has no subscriber.
   */
  readonly senderRolePath?: string;
  /** The values of the outbox-wide settings, which each function's environment takes as far as it reads them. */
  readonly settings: SettingValues;
}
