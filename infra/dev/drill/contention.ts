import { setTimeout as sleep } from 'node:timers/promises';
import { TransactionCanceledException } from '@aws-sdk/client-dynamodb';
import {
  type DynamoDBDocumentClient,
  TransactWriteCommand,
  type TransactWriteCommandInput,
} from '@aws-sdk/lib-dynamodb';

/** One item as a transaction names it: `<table>/<key as JSON>`. */
export function itemKey(tableName: string, key: Readonly<Record<string, unknown>>): string {
  return `${tableName}/${JSON.stringify(key)}`;
}

/**
 * The attributes that key the tables the drill and the bench write, in the order a Put's item is searched for
 * its key: the outbox and inbox rows (inbox cursors and parked rows included) by `messageId`, stock and
 * reservations by `sku`, orders by `orderId`, sequence counters by `orderKey`. A Put carries its whole item, not
 * its key, so its key is the first of these the item has.
 */
const PUT_KEY_ATTRIBUTES = ['messageId', 'sku', 'orderId', 'orderKey'] as const;

/** The key of the item a Put writes: the first of {@link PUT_KEY_ATTRIBUTES} its item carries. */
function putKey(item: Readonly<Record<string, unknown>> | undefined): Record<string, unknown> {
  const name = PUT_KEY_ATTRIBUTES.find((attribute) => item?.[attribute] !== undefined);
  return name === undefined ? {} : { [name]: item?.[name] };
}

/** The items a transaction touches, as {@link itemKey} spells them. */
export function transactionItemKeys(input: TransactWriteCommandInput): string[] {
  return (input.TransactItems ?? []).map((action) => {
    if (action.Put) return itemKey(action.Put.TableName ?? '', putKey(action.Put.Item));
    const write = action.Update ?? action.Delete ?? action.ConditionCheck;
    return itemKey(write?.TableName ?? '', write?.Key ?? {});
  });
}

/**
 * DynamoDB's optimistic concurrency over the items transactions touch, for an emulator that has none (moto
 * never answers TransactionConflict): a transaction that touches an item another transaction in flight holds is
 * cancelled with `TransactionConflict`, as DynamoDB cancels it. One instance holds the items for every client it
 * wraps, so concurrent invocations contend as they would on one table; `conflicts` counts the cancellations.
 *
 * A transaction that goes through holds its items from the call to the answer, and is sent at once: isolating it
 * from the other writes is the local runtime's forwarder's job, which hands moto one transaction at a time (moto
 * applies a transaction to copies of the tables it touches and puts them back when it cancels one). Sending them
 * one at a time here as well made every consumer transaction wait for the answer to the one before it, each after
 * its own turn in the forwarder's queue behind the relay's and the sweepers' writes: the consumers got one
 * transaction into that queue at a time, and fell minutes behind.
 */
export class OptimisticConcurrency {
  /** Transactions cancelled for a conflict so far. */
  conflicts = 0;
  readonly #held = new Set<string>();

  /** `client`, with its transactions subject to the conflicts of every client this instance wraps. */
  wrap(client: DynamoDBDocumentClient): DynamoDBDocumentClient {
    const send = async (command: unknown) => {
      if (!(command instanceof TransactWriteCommand)) return client.send(command as never);
      const keys = transactionItemKeys(command.input);
      if (keys.some((key) => this.#held.has(key))) {
        this.conflicts += 1;
        const reasons = keys.map((key) => ({ Code: this.#held.has(key) ? 'TransactionConflict' : 'None' }));
        // DynamoDB answers a conflict after a round trip, not at once.
        await sleep(2);
        throw new TransactionCanceledException({
          message: 'Transaction cancelled, please refer cancellation reasons for specific reasons',
          $metadata: {},
          CancellationReasons: reasons,
        });
      }
      for (const key of keys) this.#held.add(key);
      try {
        return await client.send(command);
      } finally {
        for (const key of keys) this.#held.delete(key);
      }
    };
    return new Proxy(client, {
      get: (target, property) => {
        if (property === 'send') return send;
        const value: unknown = Reflect.get(target, property);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
  }
}
