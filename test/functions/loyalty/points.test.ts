import { type GetCommand, PutCommand } from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { getPoints, type PointsDeps } from '../../../functions/loyalty/points.ts';
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { apiEvent } from '../../support/factories.ts';

let db: MemoryDocumentClient;
/** Every command the function sent, in order. */
let sent: unknown[];
let deps: PointsDeps;

beforeEach(async () => {
  db = new MemoryDocumentClient({ loyalty: { partitionKey: 'pk' } });
  sent = [];
  const inner = db.asDocumentClient();
  const client = {
    send: (command: unknown) => {
      sent.push(command);
      return inner.send(command as never);
    },
  } as unknown as PointsDeps['client'];
  deps = { client, loyaltyTable: 'loyalty' };
  await db.send(
    new PutCommand({
      TableName: 'loyalty',
      Item: { pk: 'customer#c-1', customerId: 'c-1', points: 70, updatedAt: '2024-05-01T12:00:00.000Z' },
    }),
  );
  // An order's award row, keyed by the order id: never a customer's balance.
  await db.send(
    new PutCommand({
      TableName: 'loyalty',
      Item: { pk: 'award#c-2', orderId: 'c-2', customerId: 'c-1', points: 70 },
    }),
  );
});

function getEvent(customerId: string | undefined) {
  return apiEvent({
    method: 'GET',
    path: `/loyalty/${customerId}`,
    ...(customerId === undefined ? {} : { pathParameters: { customerId } }),
  });
}

describe('getPoints', () => {
  it("answers 200 with the customer's points, read consistently, and nothing else of the row", async () => {
    const response = await getPoints(getEvent('c-1'), deps);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ customerId: 'c-1', points: 70 });
    expect((sent[0] as GetCommand).input).toEqual({
      TableName: 'loyalty',
      Key: { pk: 'customer#c-1' },
      ConsistentRead: true,
    });
  });

  it('answers 200 with 0 points for a customer whose every order was cancelled', async () => {
    await db.send(
      new PutCommand({ TableName: 'loyalty', Item: { pk: 'customer#c-3', customerId: 'c-3', points: 0 } }),
    );

    const response = await getPoints(getEvent('c-3'), deps);

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ customerId: 'c-3', points: 0 });
  });

  it.each([
    ['a customer never seen', 'c-9'],
    ["an order's id, whose award row is not a balance", 'c-2'],
  ])('answers 404 for %s', async (_, customerId) => {
    const response = await getPoints(getEvent(customerId), deps);

    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body)).toEqual({
      error: 'customer not found',
      details: [{ field: 'customerId', problem: `no points recorded for "${customerId}"` }],
    });
  });

  it('reads a customer id with any characters an order accepts', async () => {
    await db.send(
      new PutCommand({
        TableName: 'loyalty',
        Item: { pk: 'customer#ann@example.com', customerId: 'ann@example.com', points: 10 },
      }),
    );

    const response = await getPoints(getEvent('ann@example.com'), deps);

    expect(JSON.parse(response.body)).toEqual({ customerId: 'ann@example.com', points: 10 });
  });

  it.each([
    ['129 characters, more than an order accepts', 'c'.repeat(129)],
    ['no characters', ''],
    ['no path parameter', undefined],
  ])('answers 400 naming customerId for an id of %s, and reads nothing', async (_, customerId) => {
    const response = await getPoints(getEvent(customerId), deps);

    expect(response.statusCode).toBe(400);
    expect(JSON.parse(response.body)).toEqual({
      error: 'invalid customer id',
      details: [{ field: 'customerId', problem: expect.any(String) }],
    });
    expect(sent).toEqual([]);
  });
});
