import type { Duration } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { Construct } from 'constructs';
import { QUEUE_DEFAULTS } from './defaults.ts';

/** Props of a {@link QueueWithDlq}. */
export interface QueueWithDlqProps {
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
   * How long the dead-letter queue keeps a message for an operator to inspect and redrive.
   * @default Duration.days(14)
   */
  readonly deadLetterRetention?: Duration;
}

/** An encrypted, TLS-only SQS queue whose poison messages move to an equally protected dead-letter queue. */
export class QueueWithDlq extends Construct {
  /** The queue consumers read from. */
  public readonly queue: sqs.Queue;
  /** Where messages go after `maxReceiveCount` failed receives. */
  public readonly deadLetterQueue: sqs.Queue;

  constructor(scope: Construct, id: string, props: QueueWithDlqProps = {}) {
    super(scope, id);
    const maxReceiveCount = props.maxReceiveCount ?? QUEUE_DEFAULTS.maxReceiveCount;
    // A dead letter keeps its original enqueue time, so the DLQ must keep messages longer than the queue
    // (4 days by default) or they expire on arrival.
    this.deadLetterQueue = new sqs.Queue(this, 'DeadLetterQueue', {
      encryption: QUEUE_DEFAULTS.encryption,
      enforceSSL: QUEUE_DEFAULTS.enforceSSL,
      retentionPeriod: props.deadLetterRetention ?? QUEUE_DEFAULTS.deadLetterRetention,
    });
    this.queue = new sqs.Queue(this, 'Queue', {
      encryption: QUEUE_DEFAULTS.encryption,
      enforceSSL: QUEUE_DEFAULTS.enforceSSL,
      visibilityTimeout: props.visibilityTimeout ?? QUEUE_DEFAULTS.visibilityTimeout,
      deadLetterQueue: { queue: this.deadLetterQueue, maxReceiveCount },
    });
  }
}
