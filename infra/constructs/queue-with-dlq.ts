import type { Duration } from 'aws-cdk-lib';
import type * as kms from 'aws-cdk-lib/aws-kms';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { QUEUE_DEFAULTS } from './defaults.ts';
import { acknowledgeNagFindings, OUTBOX_NAG_REASONS } from './nag-suppressions.ts';

/** Props of a {@link QueueWithDlq}. */
export interface QueueWithDlqProps {
  /**
   * The queue's name (`.fifo` at the end for a FIFO queue), when another stack or account must find it by name.
   * @default - a name CloudFormation generates
   */
  readonly queueName?: string;
  /**
   * Receives before SQS moves a message to the dead-letter queue (SQS allows 1–1000).
   * @default 5
   */
  readonly maxReceiveCount?: number;
  /**
   * How long a received message stays hidden; AWS advises 6 × the consumer's timeout (at most 12 h).
   * @default Duration.seconds(180)
   */
  readonly visibilityTimeout?: Duration;
  /**
   * How long the queue keeps a message nobody received.
   * @default Duration.days(4)
   */
  readonly retentionPeriod?: Duration;
  /**
   * How long the dead-letter queue keeps a message for an operator to inspect and redrive.
   * @default Duration.days(14)
   */
  readonly deadLetterRetention?: Duration;
  /**
   * A customer-managed KMS key for both queues; senders then need `kms:GenerateDataKey` and `kms:Decrypt` on it
   * and receivers `kms:Decrypt`.
   * @default - SQS-managed server-side encryption (SSE-SQS)
   */
  readonly encryptionKey?: kms.IKey;
  /**
   * A FIFO queue (and a FIFO dead-letter queue, as SQS requires): SQS delivers each message group in order, one
   * batch of a group at a time. Senders give every message a group id and a deduplication id (no content-based
   * deduplication: a deliberate resend has the same body).
   * @default false
   */
  readonly fifo?: boolean;
}

/** The settings a {@link QueueWithDlq} was built with, defaults filled in. */
export interface QueueWithDlqSettings {
  readonly maxReceiveCount: number;
  readonly visibilityTimeout: Duration;
  readonly retentionPeriod: Duration;
  readonly deadLetterRetention: Duration;
  /** Whether both queues are FIFO. */
  readonly fifo: boolean;
}

/** An encrypted, TLS-only SQS queue whose poison messages move to an equally protected dead-letter queue. */
export class QueueWithDlq extends Construct {
  /** The queue consumers read from. */
  public readonly queue: sqs.Queue;
  /** Where messages go after `maxReceiveCount` failed receives. */
  public readonly deadLetterQueue: sqs.Queue;
  /** The settings it was built with. */
  public readonly settings: QueueWithDlqSettings;

  constructor(scope: Construct, id: string, props: QueueWithDlqProps = {}) {
    super(scope, id);
    this.settings = {
      maxReceiveCount: props.maxReceiveCount ?? QUEUE_DEFAULTS.maxReceiveCount,
      visibilityTimeout: props.visibilityTimeout ?? QUEUE_DEFAULTS.visibilityTimeout,
      retentionPeriod: props.retentionPeriod ?? QUEUE_DEFAULTS.retentionPeriod,
      deadLetterRetention: props.deadLetterRetention ?? QUEUE_DEFAULTS.deadLetterRetention,
      fifo: props.fifo ?? false,
    };
    // A dead letter keeps its original enqueue time, so the DLQ must keep messages longer than the queue
    // or they expire on arrival.
    const { retentionPeriod, deadLetterRetention } = this.settings;
    this.node.addValidation({
      validate: () =>
        deadLetterRetention.toSeconds() > retentionPeriod.toSeconds()
          ? []
          : [
              `QueueWithDlq: deadLetterRetention (${deadLetterRetention.toHumanString()}) must be longer than the ` +
                `queue's retentionPeriod (${retentionPeriod.toHumanString()}): a dead letter keeps its original ` +
                'enqueue time and would expire on arrival',
            ],
    });
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      ...queueEncryption(props.encryptionKey),
      // SQS moves a FIFO queue's dead letters only to a FIFO queue.
      ...(this.settings.fifo ? { fifo: true } : {}),
      enforceSSL: QUEUE_DEFAULTS.enforceSSL,
      retentionPeriod: this.settings.deadLetterRetention,
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      ...(props.queueName === undefined ? {} : { queueName: props.queueName }),
      ...queueEncryption(props.encryptionKey),
      ...(this.settings.fifo ? fifoQueueProps() : {}),
      enforceSSL: QUEUE_DEFAULTS.enforceSSL,
      visibilityTimeout: this.settings.visibilityTimeout,
      retentionPeriod: this.settings.retentionPeriod,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount: this.settings.maxReceiveCount },
    });
    acknowledgeNagFindings(this.deadLetterQueue, [OUTBOX_NAG_REASONS.deadLetterQueueRedrive]);
  }
}

/**
 * A FIFO queue in high-throughput mode: deduplication and the throughput quota per message group rather than
 * per queue (a standard FIFO queue takes 300 sends a second, 3,000 in batches), so many order keys flow at
 * once. Content-based deduplication stays off: a deliberate resend carries the same body under a new id.
 */
function fifoQueueProps(): Pick<sqs.QueueProps, 'fifo' | 'deduplicationScope' | 'fifoThroughputLimit'> {
  return {
    fifo: true,
    deduplicationScope: sqs.DeduplicationScope.MESSAGE_GROUP,
    fifoThroughputLimit: sqs.FifoThroughputLimit.PER_MESSAGE_GROUP_ID,
  };
}

/** SQS-managed encryption, or `key` when one is given. */
export function queueEncryption(
  key: kms.IKey | undefined,
): Pick<sqs.QueueProps, 'encryption' | 'encryptionMasterKey'> {
  return key === undefined
    ? { encryption: QUEUE_DEFAULTS.encryption }
    : { encryption: sqs.QueueEncryption.KMS, encryptionMasterKey: key };
}
