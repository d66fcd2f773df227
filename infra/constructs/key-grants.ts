import type * as iam from 'aws-cdk-lib/aws-iam';
import type * as kms from 'aws-cdk-lib/aws-kms';

/**
 * How a function uses the data a customer-managed key protects, as the AWS service it calls sees it.
 * - `read`: reads items, index pages, stream records, received SQS messages or S3 objects: DynamoDB, SQS and
 *   S3 decrypt with the caller's right to `kms:Decrypt` (DynamoDB also describes the key).
 * - `write`: also writes items, sends messages or puts objects: the service asks for a new data key and
 *   encrypts with it, with the caller's rights.
 */
export type KeyUse = 'read' | 'write';

/** The key actions each use needs (the same sets `Table.grantReadData`/`grantWriteData` give a key). */
export const KEY_ACTIONS: Readonly<Record<KeyUse, readonly string[]>> = {
  read: ['kms:Decrypt', 'kms:DescribeKey'],
  write: ['kms:Decrypt', 'kms:DescribeKey', 'kms:Encrypt', 'kms:GenerateDataKey*'],
};

/**
 * Lets `grantee` use `key` the way `use` says, and nothing more; no grant when there is no key (the data is
 * then encrypted with keys the services own, which need no permission).
 * @example
 * grantKeyUse(outbox.encryptionKey, relay, 'write');
 */
export function grantKeyUse(key: kms.IKey | undefined, grantee: iam.IGrantable, use: KeyUse): void {
  key?.grant(grantee, ...KEY_ACTIONS[use]);
}
