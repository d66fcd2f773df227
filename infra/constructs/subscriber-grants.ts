/**
 * What a producer's resources allow its subscribers, and what its senders may do with a subscriber's key. A
 * subscriber's roles live in the subscriber's stack (possibly another account), so each policy names them as the
 * roles under the subscriber's IAM path in its account (`aws:PrincipalArn`), a value both sides derive: the
 * account itself is the principal, the condition narrows it to exactly those roles.
 */
import * as iam from 'aws-cdk-lib/aws-iam';
import * as kms from 'aws-cdk-lib/aws-kms';
import type * as s3 from 'aws-cdk-lib/aws-s3';
import type * as sqs from 'aws-cdk-lib/aws-sqs';
import type { Construct } from 'constructs';
import { CLAIM_CHECK_PREFIX } from '../../shared/claim-check/claim-check-reference.ts';
import { KEY_ACTIONS } from './key-grants.ts';
import { rolesUnderPath, subscriberRolePath } from './subscription-names.ts';
import type { OutboxSubscriberProps } from './transactional-outbox-props.ts';

/** The subscribers of an outbox, by name, and the outbox's name their role paths derive from. */
export interface SubscriberPrincipals {
  /** The outbox's name, the base of every path. */
  readonly outboxName: string;
  /** The subscribers as the producer declares them (their accounts). */
  readonly subscribers: Readonly<Record<string, OutboxSubscriberProps>>;
}

/**
 * A resource-policy statement allowing `actions` on `resources` to exactly the roles under `path` in `account` (the
 * stack's own when undefined): the account as the principal, narrowed by `aws:PrincipalArn`.
 */
export function rolesUnderPathStatement(
  roles: { readonly account: string | undefined; readonly path: string | readonly string[] },
  statement: { readonly actions: readonly string[]; readonly resources: readonly string[] },
): iam.PolicyStatement {
  const paths = typeof roles.path === 'string' ? [roles.path] : roles.path;
  return new iam.PolicyStatement({
    principals: [
      roles.account === undefined ? new iam.AccountRootPrincipal() : new iam.AccountPrincipal(roles.account),
    ],
    actions: [...statement.actions],
    resources: [...statement.resources],
    conditions: {
      ArnLike: { 'aws:PrincipalArn': paths.map((path) => rolesUnderPath(path, roles.account)) },
    },
  });
}

/**
 * One statement per account the subscribers are in: that account as the principal, narrowed by `aws:PrincipalArn`
 * to the roles under each of its subscribers' paths.
 */
export function subscriberStatements(
  principals: SubscriberPrincipals,
  statement: { readonly actions: readonly string[]; readonly resources: readonly string[] },
): iam.PolicyStatement[] {
  const pathsByAccount = new Map<string | undefined, string[]>();
  for (const [name, subscriber] of Object.entries(principals.subscribers)) {
    const path = subscriberRolePath(principals.outboxName, name);
    pathsByAccount.set(subscriber.account, [...(pathsByAccount.get(subscriber.account) ?? []), path]);
  }
  return [...pathsByAccount].map(([account, paths]) =>
    rolesUnderPathStatement({ account, path: paths }, statement),
  );
}

/** Lets each subscriber's consumer send receipts to `queue`: `sqs:SendMessage` in the queue's policy. */
export function allowReceiptsFrom(queue: sqs.IQueue, principals: SubscriberPrincipals): void {
  for (const statement of subscriberStatements(principals, {
    actions: ['sqs:SendMessage'],
    resources: [queue.queueArn],
  })) {
    queue.addToResourcePolicy(statement);
  }
}

/**
 * Lets each subscriber's consumer read claim-checked payloads from `bucket` (`s3:GetObject` under `claim-check/`),
 * in the bucket's policy. A bucket you passed in (not created by the outbox) is left alone: allow them yourself.
 */
export function allowClaimCheckReadsBy(bucket: s3.IBucket, principals: SubscriberPrincipals): void {
  for (const statement of subscriberStatements(principals, {
    actions: ['s3:GetObject'],
    resources: [bucket.arnForObjects(`${CLAIM_CHECK_PREFIX}*`)],
  })) {
    bucket.addToResourcePolicy(statement);
  }
}

/**
 * Lets each subscriber's consumer use the producer's key as sending a receipt to a queue under it needs (and
 * reading a claim-checked payload under it): the `write` use, in the key's policy. A key you passed in that this
 * stack does not own keeps its policy: allow them there.
 */
export function allowKeyUseBy(key: kms.IKey, principals: SubscriberPrincipals): void {
  for (const statement of subscriberStatements(principals, {
    actions: KEY_ACTIONS.write,
    resources: ['*'],
  })) {
    key.addToResourcePolicy(statement);
  }
}

/**
 * Gives `senders` (the relay and the sweeper) the use of each subscriber's queue key that sending needs, for the
 * subscribers that encrypt their queue with one of their own (`queueKeyArn`).
 */
export function grantSubscriberQueueKeys(
  scope: Construct,
  subscribers: Readonly<Record<string, OutboxSubscriberProps>>,
  senders: readonly iam.IGrantable[],
): void {
  for (const [name, subscriber] of Object.entries(subscribers)) {
    if (subscriber.queueKeyArn === undefined) continue;
    const key = kms.Key.fromKeyArn(scope, `${name}QueueKey`, subscriber.queueKeyArn);
    for (const sender of senders) {
      iam.Grant.addToPrincipal({
        grantee: sender,
        actions: [...KEY_ACTIONS.write],
        resourceArns: [key.keyArn],
      });
    }
  }
}
