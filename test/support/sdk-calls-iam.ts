/**
 * What IAM must allow for the SDK calls a function sends: each recorded call mapped to its IAM actions and the
 * resources they apply to, plus what Lambda itself does with the function's role (event source mappings,
 * X-Ray, logs) and the key actions a customer-managed key adds. Pure: no SDK, no CDK.
 */
import type { SdkCall } from './sdk-calls.ts';

/** What a permission applies to, by the name the code uses (a table's name, a queue's URL). */
export type PermissionTarget =
  | { readonly kind: 'table'; readonly name: string }
  | { readonly kind: 'index'; readonly name: string; readonly index: string }
  | { readonly kind: 'stream'; readonly name: string }
  | { readonly kind: 'queue'; readonly name: string }
  | { readonly kind: 'objects'; readonly name: string; readonly prefix: string }
  | { readonly kind: 'logGroup'; readonly name: string }
  | { readonly kind: 'key'; readonly name: string }
  | { readonly kind: 'any' };

/** One IAM action on one target. */
export interface Permission {
  readonly action: string;
  readonly target: PermissionTarget;
}

/** SQS batch operations are authorised as their single-message action. */
const SQS_ACTIONS: Readonly<Record<string, string>> = {
  SendMessageBatch: 'SendMessage',
  DeleteMessageBatch: 'DeleteMessage',
  ChangeMessageVisibilityBatch: 'ChangeMessageVisibility',
};

/** Each kind of TransactWriteItems item is authorised as the single-item action on its table. */
const TRANSACT_ACTIONS = {
  Put: 'dynamodb:PutItem',
  Update: 'dynamodb:UpdateItem',
  ConditionCheck: 'dynamodb:ConditionCheckItem',
  Delete: 'dynamodb:DeleteItem',
} as const;

/** The part of an S3 key up to its last `/` (the prefix a grant names), or '' for a key without one. */
export function keyPrefix(key: string): string {
  const slash = key.lastIndexOf('/');
  return slash < 0 ? '' : key.slice(0, slash + 1);
}

/** The permissions one recorded call needs. */
export function permissionsForCall(call: SdkCall): Permission[] {
  switch (call.service) {
    case 'dynamodb':
      return dynamoPermissions(call);
    case 'sqs':
      if (call.command === 'StartMessageMoveTask') return moveTaskPermissions(call);
      return [{ action: `sqs:${SQS_ACTIONS[call.command] ?? call.command}`, target: queueOf(call) }];
    case 's3':
      return [
        {
          action: `s3:${call.command}`,
          target: { kind: 'objects', name: call.bucket ?? '?', prefix: keyPrefix(call.key ?? '') },
        },
      ];
    default:
      throw new Error(`no IAM mapping for ${call.command} (service ${call.service})`);
  }
}

/**
 * A move task runs with the caller's rights: it starts on the source queue, receives, deletes and reads the
 * attributes of its messages there, and sends them to the destination.
 */
function moveTaskPermissions(call: SdkCall): Permission[] {
  const source = { kind: 'queue', name: call.sourceArn ?? '?' } as const;
  return [
    ...['StartMessageMoveTask', 'ReceiveMessage', 'DeleteMessage', 'GetQueueAttributes'].map((action) => ({
      action: `sqs:${action}`,
      target: source,
    })),
    { action: 'sqs:SendMessage', target: { kind: 'queue', name: call.destinationArn ?? '?' } },
  ];
}

function queueOf(call: SdkCall): PermissionTarget {
  return { kind: 'queue', name: call.queueUrl ?? '?' };
}

function dynamoPermissions(call: SdkCall): Permission[] {
  if (call.command === 'TransactWriteItems') {
    return (call.transactItems ?? []).map((item) => ({
      action: TRANSACT_ACTIONS[item.kind],
      target: { kind: 'table', name: item.table },
    }));
  }
  const action = `dynamodb:${call.command}`;
  if (call.command === 'ListStreams') return [{ action, target: { kind: 'any' } }];
  if (call.streamArn !== undefined) return [{ action, target: { kind: 'stream', name: call.streamArn } }];
  const name = call.table ?? '?';
  // A Query or Scan of an index is authorised on the index's ARN, not the table's.
  if (call.indexName !== undefined) {
    return [{ action, target: { kind: 'index', name, index: call.indexName } }];
  }
  return [{ action, target: { kind: 'table', name } }];
}

/** An event source mapping of a function, as the permissions of its role see it. */
export type EventSourceNeed =
  | { readonly kind: 'stream'; readonly table: string; readonly onFailureQueue?: string }
  | { readonly kind: 'queue'; readonly queue: string };

/**
 * What Lambda does with the function's role for an event source mapping: it reads the stream (ListStreams has
 * no resource-level permission) or receives from the queue, and sends a failed stream batch's metadata to the
 * on-failure queue.
 */
export function permissionsForEventSource(source: EventSourceNeed): Permission[] {
  if (source.kind === 'queue') {
    const target = { kind: 'queue', name: source.queue } as const;
    return ['ReceiveMessage', 'DeleteMessage', 'ChangeMessageVisibility', 'GetQueueAttributes'].map(
      (action) => ({ action: `sqs:${action}`, target }),
    );
  }
  const stream = { kind: 'stream', name: source.table } as const;
  return [
    ...['DescribeStream', 'GetRecords', 'GetShardIterator'].map((action) => ({
      action: `dynamodb:${action}`,
      target: stream,
    })),
    { action: 'dynamodb:ListStreams', target: { kind: 'any' } },
    ...(source.onFailureQueue === undefined
      ? []
      : [{ action: 'sqs:SendMessage', target: { kind: 'queue', name: source.onFailureQueue } } as const]),
  ];
}

/** Active tracing: the function's X-Ray segments (X-Ray has no resource-level permission). */
export const XRAY_PERMISSIONS: readonly Permission[] = [
  { action: 'xray:PutTraceSegments', target: { kind: 'any' } },
  { action: 'xray:PutTelemetryRecords', target: { kind: 'any' } },
];

/** The function's logs: new streams and events in its own log group, nothing else. */
export function logPermissions(logGroup: string): Permission[] {
  return ['logs:CreateLogStream', 'logs:PutLogEvents'].map((action) => ({
    action,
    target: { kind: 'logGroup', name: logGroup },
  }));
}

/** DynamoDB actions that write an item (its new image is encrypted with a data key). */
const DYNAMODB_WRITES = new Set([
  'dynamodb:PutItem',
  'dynamodb:UpdateItem',
  'dynamodb:DeleteItem',
  'dynamodb:BatchWriteItem',
]);

/** Key actions DynamoDB asks of the caller: reading decrypts (and describes the key), writing also encrypts. */
const DYNAMODB_KEY_READ = ['kms:Decrypt', 'kms:DescribeKey'];
const DYNAMODB_KEY_WRITE = [...DYNAMODB_KEY_READ, 'kms:Encrypt', 'kms:GenerateDataKey*'];

/** The key actions an SQS or S3 action asks of the caller when the data is under a customer-managed key. */
const KEY_ACTIONS_BY_ACTION: Readonly<Record<string, readonly string[]>> = {
  // A sender gets a data key and, when SQS reuses one it cached, has it decrypted.
  'sqs:SendMessage': ['kms:GenerateDataKey', 'kms:Decrypt'],
  'sqs:ReceiveMessage': ['kms:Decrypt'],
  's3:PutObject': ['kms:GenerateDataKey'],
  's3:GetObject': ['kms:Decrypt'],
};

function keyActionsOf(action: string): readonly string[] {
  if (!action.startsWith('dynamodb:')) return KEY_ACTIONS_BY_ACTION[action] ?? [];
  if (action === 'dynamodb:ListStreams') return [];
  const writes = DYNAMODB_WRITES.has(action) || action === 'dynamodb:ConditionCheckItem';
  return writes ? DYNAMODB_KEY_WRITE : DYNAMODB_KEY_READ;
}

/**
 * The key permissions `permissions` imply where the data is under a customer-managed key: `keyOf` names the key
 * of a target (undefined for AWS-owned keys, which need no permission).
 */
export function keyPermissions(
  permissions: readonly Permission[],
  keyOf: (target: PermissionTarget) => string | undefined,
): Permission[] {
  const implied: Permission[] = [];
  for (const { action, target } of permissions) {
    const key = keyOf(target);
    if (key === undefined) continue;
    // A stream read is a DynamoDB read: its records are decrypted with the reader's rights.
    const actions = keyActionsOf(action);
    for (const keyAction of actions) implied.push({ action: keyAction, target: { kind: 'key', name: key } });
  }
  return dedupe(implied);
}

/** `permissions` without repeats, in a stable order. */
export function dedupe(permissions: readonly Permission[]): Permission[] {
  const seen = new Map<string, Permission>();
  for (const permission of permissions) seen.set(describePermission(permission), permission);
  return [...seen.entries()].sort(([a], [b]) => a.localeCompare(b)).map(([, permission]) => permission);
}

/** `dynamodb:Query on index orders/byAggregate`: one permission as text, for messages and comparisons. */
export function describePermission({ action, target }: Permission): string {
  switch (target.kind) {
    case 'any':
      return `${action} on *`;
    case 'index':
      return `${action} on index ${target.name}/${target.index}`;
    case 'objects':
      return `${action} on objects ${target.name}/${target.prefix}*`;
    default:
      return `${action} on ${target.kind} ${target.name}`;
  }
}
