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
  readonly outboxName: string;
  readonly subscribers: Readonly<Record<string, OutboxSubscriberProps>>;
}

/**
 * One statement per account the subscribers are in: that account as the principal, narrowed by `aws:PrincipalArn`
 * to the roles under each of its subscribers' paths.
 */
export function subscriberStatements(
  principals: SubscriberPrincipals,
  statement: { readonly actions: readonly string[]; readonly resources: readonly string[] },
): iam.PolicyStatement[] {
  const patternsByAccount = new Map<string | undefined, string[]>();
  for (const [name, subscriber] of Object.entries(principals.subscribers)) {
    const pattern = rolesUnderPath(subscriberRolePath(principals.outboxName, name), subscriber.account);
    patternsByAccount.set(subscriber.account, [
      ...(patternsByAccount.get(subscriber.account) ?? []),
      pattern,
    ]);
  }
  return [...patternsByAccount].map(
    ([account, patterns]) =>
      new iam.PolicyStatement({
        principals: [
          account === undefined ? new iam.AccountRootPrincipal() : new iam.AccountPrincipal(account),
        ],
        actions: [...statement.actions],
        resources: [...statement.resources],
        conditions: { ArnLike: { 'aws:PrincipalArn': patterns } },
      }),
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
