import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';

/** A Document client that answers at most so many queries, and whether it had to stop answering. */
export interface PageBudget {
  readonly client: DynamoDBDocumentClient;
  /** True once a query was refused: what was read is then a lower bound. */
  exhausted(): boolean;
}

/**
 * Bounds what a reader that pages through an index (the sweeper's backlog gauges) can cost per run: after
 * `maxPages` requests, each further one gets an empty last page instead of being sent, so the reader finishes
 * with what it has read — lower bounds — instead of reading a large backlog in full every minute.
 * @example
 * const budget = pageBudget(client, 100);
 * const counts = await countOutbox({ ...deps, outbox: new DynamoOutboxAdminStore({ client: budget.client, outboxTable }) });
 * if (budget.exhausted()) logger.warn('backlog gauges are lower bounds', {});
 */
export function pageBudget(client: DynamoDBDocumentClient, maxPages: number): PageBudget {
  let sent = 0;
  let refused = false;
  const send = (...args: Parameters<DynamoDBDocumentClient['send']>) => {
    if (sent >= maxPages) {
      refused = true;
      return Promise.resolve({ Items: [], $metadata: {} });
    }
    sent += 1;
    return client.send(...args);
  };
  const budgeted = new Proxy(client, {
    get: (target, property, receiver) =>
      property === 'send' ? send : Reflect.get(target, property, receiver),
  });
  return { client: budgeted, exhausted: () => refused };
}
