import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AdminDeps } from '../admin/admin-deps.ts';
import { DynamoAuditLog } from './audit-table.ts';
import { DynamoInboxAdminStore } from './inbox-table.ts';
import { DynamoOutboxAdminStore } from './outbox-table.ts';
import { transactWrite } from './transact-write.ts';

/** Where the admin's tables are: one client for all of them, and the outbox and audit table names. */
export interface DynamoAdminTables {
  readonly client: DynamoDBDocumentClient;
  readonly outboxTable: string;
  /** Audit trail of operators' actions, and the redrive journal. */
  readonly auditTable: string;
}

/** The admin's table ports. */
export type AdminTablePorts = Pick<AdminDeps, 'outbox' | 'audit' | 'inboxes' | 'transactions'>;

/** The admin's dependencies over DynamoDB: the client and table names in place of the table ports. */
export type DynamoAdminDepsOptions = DynamoAdminTables & Omit<AdminDeps, keyof AdminTablePorts>;

/**
 * {@link AdminDeps} over DynamoDB: the outbox, audit and inbox tables through their adapters, one client for all
 * of them (and for the transactions that span them); every other field is passed on as it is. Given only some of
 * the other fields, it returns those with the ports, for a core function that needs no more.
 * @example
 * const admin = new OutboxAdmin(dynamoAdminDeps({ client, outboxTable, auditTable, queues, ...routes }));
 */
export function dynamoAdminDeps<Options extends DynamoAdminTables>(
  options: Options,
): Omit<Options, keyof DynamoAdminTables> & AdminTablePorts {
  const { client, outboxTable, auditTable, ...rest } = options;
  return {
    ...rest,
    outbox: new DynamoOutboxAdminStore({ client, outboxTable }),
    audit: new DynamoAuditLog({ client, auditTable }),
    inboxes: new DynamoInboxAdminStore({ client }),
    transactions: { write: (actions, idempotencyToken) => transactWrite(client, actions, idempotencyToken) },
  };
}
