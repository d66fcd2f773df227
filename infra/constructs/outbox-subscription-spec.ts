/**
 * What a subscriber's stack needs of the producer's outbox, as plain values: the producer's
 * `TransactionalOutbox.subscriptionSpec(subscriber)` gives it, the subscriber's `OutboxSubscription` is built from
 * it. Nothing in it refers to a resource of the producer's stack but `keyArn` (and `claimCheckBucketName` when the
 * producer was given a bucket of its own), which are only known once the producer is deployed: within one CDK app
 * CDK passes them between the stacks itself; for a subscriber in another account (or another app) copy them from the
 * producer's deployed stack. The rest is derived from names, so the stacks deploy in either order.
 */
import type { OrderedTopic } from '../../shared/ordering/ordering.ts';
import type { RetryPolicy } from '../../shared/retry/retry-policy.ts';

/** Everything a subscriber's `OutboxSubscription` needs of the producer, as values that cross stacks and accounts. */
export interface OutboxSubscriptionSpec {
  /** The producer's outbox name: the base of the queue names and IAM paths both sides derive. */
  readonly outboxName: string;
  /** The subscriber's name, as the producer declared it (`inventory`). */
  readonly subscriber: string;
  /** The topics the producer delivers to this subscriber. */
  readonly topics: readonly string[];
  /** The ordered ones among them, as the consumer's `ORDERED_TOPICS` holds them; `{}` when none is. */
  readonly orderedTopics: Readonly<Record<string, OrderedTopic>>;
  /** Whether the subscriber's queue is FIFO (the producer sends each delivery with a group and deduplication id). */
  readonly fifo: boolean;
  /** The producer's account; `undefined`: the subscriber's own (the producer's stack is environment-agnostic). */
  readonly producerAccount?: string;
  /** The producer's region; `undefined`: the subscriber's own. */
  readonly producerRegion?: string;
  /** The account the producer declared for the subscriber; `undefined`: the producer's. */
  readonly subscriberAccount?: string;
  /** The region the producer declared for the subscriber; `undefined`: the producer's. */
  readonly subscriberRegion?: string;
  /**
   * The producer's customer-managed key, when it has one: its receipt queue (and its claim-checked payloads) are
   * encrypted with it, so the subscriber's consumer needs `kms:GenerateDataKey` and `kms:Decrypt` on it.
   */
  readonly keyArn?: string;
  /**
   * The bucket of the producer's claim-checked payloads, when the claim check is on: the subscriber's consumer
   * reads `claim-check/` objects from it (the bucket's policy allows the subscriber's roles).
   */
  readonly claimCheckBucketName?: string;
  /**
   * How long the claim check keeps a payload (days): a copy delivered later than this after it was written could
   * not be read, so the subscriber's queue and dead-letter queue must not keep messages longer.
   */
  readonly claimCheckExpirationDays?: number;
  /**
   * Per topic, the retry policy of this subscriber's deliveries — its topics' and the outbox's own messages'
   * (`outbox.erase`, `outbox.skip`), which come on the same queue: with the confirm deadline, how late a copy can come.
   */
  readonly retryPolicies: Readonly<Record<string, RetryPolicy>>;
  /** How long the producer waits for a delivery's receipt before it resends (doubling per round). */
  readonly confirmDeadlineMs: number;
}
