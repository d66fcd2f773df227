import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { describe, expect, it } from 'vitest';
import { CallsInFlight } from '../../../infra/dev/drill/calls-in-flight.ts';
import type { ConsumeDeps } from '../../../shared/lambda/inbox-consumer.ts';
import type { ConfirmOutcome } from '../../../shared/outbox/outbox-store.ts';

/** A promise settled from outside. */
function pending<T>() {
  let resolve: (value: T) => void = () => {};
  const promise = new Promise<T>((settle) => {
    resolve = settle;
  });
  return { promise, resolve };
}

describe('CallsInFlight', () => {
  it('settles once the last client call and confirmation out has answered', async () => {
    const get = pending<unknown>();
    const confirm = pending<ConfirmOutcome>();
    const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
    client.send = (() => get.promise) as typeof client.send;
    const deps: ConsumeDeps = {
      client,
      inboxTable: 'inbox',
      clock: () => new Date(),
      confirmer: { confirm: () => confirm.promise },
    };
    const inFlight = new CallsInFlight();
    const tracked = inFlight.track(deps);
    let settled = false;

    const call = tracked.client.send(new GetCommand({ TableName: 'inbox', Key: { messageId: 'm-1' } }));
    const confirmation = tracked.confirmer?.confirm('m-1', new Date(), 'APPLIED');
    void inFlight.settled().then(() => {
      settled = true;
    });
    expect(inFlight.count).toBe(2);

    get.resolve({});
    await call;
    expect(settled).toBe(false);
    confirm.resolve('CONFIRMED');
    await expect(confirmation).resolves.toBe('CONFIRMED');
    await inFlight.settled();
    expect(settled).toBe(true);
    expect(inFlight.count).toBe(0);
  });

  it('counts a call that fails as answered, and passes its error on', async () => {
    const client = DynamoDBDocumentClient.from(new DynamoDBClient({ region: 'eu-west-1' }));
    client.send = (() => Promise.reject(new Error('throttled'))) as typeof client.send;
    const inFlight = new CallsInFlight();
    const tracked = inFlight.track({ client, inboxTable: 'inbox', clock: () => new Date() });

    await expect(
      tracked.client.send(new GetCommand({ TableName: 'inbox', Key: { messageId: 'm-1' } })),
    ).rejects.toThrow('throttled');
    await inFlight.settled();
    expect(inFlight.count).toBe(0);
  });
});
