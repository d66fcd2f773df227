/**
 * The names a producer's outbox and its subscribers both derive, so that neither stack references the other: the
 * producer sends to a subscriber's queue it never created, the subscriber sends receipts to a queue it never
 * created, and each side's resource policy names the other side's roles by their IAM path. Two stacks that
 * referenced each other's resources would be a cycle (the producer knowing the subscriber's queue, the
 * subscriber knowing the producer's receipt queue); derived names can be deployed in either order, and across
 * accounts, where no reference can reach.
 */
import { Aws, Token } from 'aws-cdk-lib';

/**
 * An outbox name: 1–34 letters, digits, `-` or `_`, starting with a letter or digit. The longest subscriber queue name it makes,
 * `<outbox>-<subscriber of 40>.fifo`, then stays within SQS's 80 characters.
 */
export const OUTBOX_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9_-]{0,33}$/;

/** The longest outbox name, see {@link OUTBOX_NAME_PATTERN}. */
export const MAX_OUTBOX_NAME_LENGTH = 34;

/** Where a queue or role is: an account and a region, each `undefined` for the stack's own. */
export interface AccountRegion {
  /** @default - the account of the stack the value is used in */
  readonly account?: string | undefined;
  /** @default - the region of the stack the value is used in */
  readonly region?: string | undefined;
}

/** The name of `subscriber`'s queue of outbox `outboxName` (`Shop-Outbox-inventory`, `….fifo` when FIFO). */
export function subscriberQueueName(outboxName: string, subscriber: string, fifo: boolean): string {
  return `${outboxName}-${subscriber}${fifo ? '.fifo' : ''}`;
}

/** The name of the producer's receipt queue, which every subscriber sends its receipts to. */
export function receiptQueueName(outboxName: string): string {
  return `${outboxName}-receipts`;
}

/** The IAM path of the producer's roles that send to subscribers' queues (the relay's and the sweeper's). */
export function senderRolePath(outboxName: string): string {
  return `/outbox/${outboxName}/senders/`;
}

/** The IAM path of `subscriber`'s roles that send receipts (its consumer's). */
export function subscriberRolePath(outboxName: string, subscriber: string): string {
  return `/outbox/${outboxName}/subscribers/${subscriber}/`;
}

/**
 * The name of the claim-check bucket of an outbox that has subscribers: the outbox's name in lowercase (its first 24
 * characters), a hash of the whole name (so names that differ only in case, `_` and `-`, or past the 24th character
 * never share a bucket), the account and the region: unique across S3 and within its 63 characters. The subscribers
 * read payloads from it, so they derive it too.
 */
export function claimCheckBucketNameOf(outboxName: string, where: AccountRegion = {}): string {
  const prefix = outboxName.toLowerCase().replaceAll('_', '-').slice(0, 24).replace(/-+$/, '');
  return `${prefix}-${nameHash(outboxName)}-${where.account ?? Aws.ACCOUNT_ID}-${where.region ?? Aws.REGION}`;
}

/** Six base-36 characters of a 32-bit FNV-1a hash of `name`: the same on both sides, from the name alone. */
function nameHash(name: string): string {
  let hash = 0x811c9dc5;
  for (const char of name) hash = Math.imul(hash ^ (char.codePointAt(0) ?? 0), 0x01000193) >>> 0;
  return hash.toString(36).padStart(6, '0').slice(-6);
}

/** The ARN of queue `name` in `where` (the stack's own account and region where not given). */
export function queueArnOf(name: string, where: AccountRegion = {}): string {
  return `arn:${Aws.PARTITION}:sqs:${where.region ?? Aws.REGION}:${where.account ?? Aws.ACCOUNT_ID}:${name}`;
}

/** The URL of queue `name` in `where`, as SQS and CloudFormation give it. */
export function queueUrlOf(name: string, where: AccountRegion = {}): string {
  return `https://sqs.${where.region ?? Aws.REGION}.${Aws.URL_SUFFIX}/${where.account ?? Aws.ACCOUNT_ID}/${name}`;
}

/** The ARN pattern (for `ArnLike` on `aws:PrincipalArn`) of every role under `path` in `account`. */
export function rolesUnderPath(path: string, account: string | undefined): string {
  return `arn:${Aws.PARTITION}:iam::${account ?? Aws.ACCOUNT_ID}:role${path}*`;
}

/** The account root principal's ARN, which a resource policy names before its `aws:PrincipalArn` condition. */
export function accountRootArn(account: string | undefined): string {
  return `arn:${Aws.PARTITION}:iam::${account ?? Aws.ACCOUNT_ID}:root`;
}

/** `value` when it is known at synth, `undefined` when it is a token (an environment-agnostic stack's account). */
export function literalOrUndefined(value: string): string | undefined {
  return Token.isUnresolved(value) ? undefined : value;
}
