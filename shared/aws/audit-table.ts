import {
  type DynamoDBDocumentClient,
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import type { AuditLog, RedriveJournalRow } from '../admin/admin-ports.ts';
import type { AuditRow } from '../admin/audit-trail.ts';
import type { TransactWriteAction } from '../transaction/transaction-limits.ts';

/**
 * The audit table: the only module that knows its keys and calls. One partition per subject, rows in time order
 * (the action id is a ULID); the redrive journal shares it (subject `redrive:<dlq name>`, action id = the SQS
 * message id). The CDK construct reads the keys from here.
 */
export const AUDIT_KEYS = { partitionKey: 'subject', sortKey: 'actionId' } as const;

/**
 * The Put of an audit row, for the same TransactWriteItems as the change it records: both or neither. Never
 * overwrites a row.
 */
export function auditPut(auditTable: string, row: AuditRow): TransactWriteAction {
  return {
    Put: {
      TableName: auditTable,
      Item: { ...row },
      ConditionExpression: 'attribute_not_exists(#subject)',
      ExpressionAttributeNames: { '#subject': AUDIT_KEYS.partitionKey },
    },
  };
}

/** Every audit row of `subject`, oldest first. */
export async function readAuditTrail(
  client: Pick<DynamoDBDocumentClient, 'send'>,
  auditTable: string,
  subject: string,
): Promise<AuditRow[]> {
  const rows: AuditRow[] = [];
  let startKey: Record<string, unknown> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({
        TableName: auditTable,
        KeyConditionExpression: '#subject = :subject',
        ExpressionAttributeNames: { '#subject': AUDIT_KEYS.partitionKey },
        ExpressionAttributeValues: { ':subject': subject },
        ...(startKey === undefined ? {} : { ExclusiveStartKey: startKey }),
      }),
    );
    rows.push(...((page.Items ?? []) as AuditRow[]));
    startKey = page.LastEvaluatedKey;
  } while (startKey !== undefined);
  return rows;
}

/** One page of {@link scanAuditRows}. */
export interface AuditScanPage {
  /** The rows of the page, in the table's order (by subject, not by time); the redrive journal's rows included. */
  readonly rows: readonly AuditRow[];
  /** Where the next page starts; absent after the last one. */
  readonly nextKey?: Readonly<Record<string, unknown>>;
}

/**
 * One page of every audit row, whatever its subject (a Scan, read-only): for an operator who asks "who did what"
 * across the outbox rather than about one message. The audit table holds operators' actions and the redrive
 * journal, never a message; the console reads a bounded number of pages of it.
 */
export async function scanAuditRows(
  client: Pick<DynamoDBDocumentClient, 'send'>,
  auditTable: string,
  page: { readonly limit: number; readonly startKey?: Readonly<Record<string, unknown>> },
): Promise<AuditScanPage> {
  const result = await client.send(
    new ScanCommand({
      TableName: auditTable,
      Limit: page.limit,
      ...(page.startKey === undefined ? {} : { ExclusiveStartKey: { ...page.startKey } }),
    }),
  );
  return {
    rows: (result.Items ?? []) as AuditRow[],
    ...(result.LastEvaluatedKey === undefined ? {} : { nextKey: result.LastEvaluatedKey }),
  };
}

/** {@link AuditLog} on a DynamoDB table. */
export class DynamoAuditLog implements AuditLog {
  readonly #client: Pick<DynamoDBDocumentClient, 'send'>;
  readonly #table: string;

  constructor(options: {
    readonly client: Pick<DynamoDBDocumentClient, 'send'>;
    readonly auditTable: string;
  }) {
    this.#client = options.client;
    this.#table = options.auditTable;
  }

  /** @inheritdoc */
  async put(row: AuditRow): Promise<void> {
    const { Put } = auditPut(this.#table, row);
    if (Put !== undefined) await this.#client.send(new PutCommand(Put));
  }

  /** @inheritdoc */
  putAction(row: AuditRow): TransactWriteAction {
    return auditPut(this.#table, row);
  }

  /** @inheritdoc */
  trail(subject: string): Promise<AuditRow[]> {
    return readAuditTrail(this.#client, this.#table, subject);
  }

  /** @inheritdoc */
  async readJournal(key: {
    readonly subject: string;
    readonly actionId: string;
  }): Promise<{ readonly state?: unknown } | undefined> {
    const { Item } = await this.#client.send(
      new GetCommand({ TableName: this.#table, Key: this.#key(key), ConsistentRead: true }),
    );
    return Item;
  }

  /** @inheritdoc */
  async writeJournal(row: RedriveJournalRow): Promise<void> {
    const { subject, actionId, ...rest } = row;
    await this.#client.send(
      new PutCommand({ TableName: this.#table, Item: { ...this.#key({ subject, actionId }), ...rest } }),
    );
  }

  /** @inheritdoc */
  async markJournal(
    key: { readonly subject: string; readonly actionId: string },
    state: string,
    at: string,
  ): Promise<void> {
    await this.#client.send(
      new UpdateCommand({
        TableName: this.#table,
        Key: this.#key(key),
        UpdateExpression: 'SET #state = :sent, #sentAt = :now',
        ExpressionAttributeNames: { '#state': 'state', '#sentAt': 'sentAt' },
        ExpressionAttributeValues: { ':sent': state, ':now': at },
      }),
    );
  }

  #key(key: { readonly subject: string; readonly actionId: string }): Record<string, string> {
    return { [AUDIT_KEYS.partitionKey]: key.subject, [AUDIT_KEYS.sortKey]: key.actionId };
  }
}
