import { DynamoDBDocumentClient, GetCommand, QueryCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/orders/get-order/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import { apiEvent, lambdaContext } from '../../../support/factories.ts';

const env = {
  ORDERS_TABLE: 'orders-table',
  OUTBOX_TABLE: 'outbox-table',
  AWS_REGION: 'eu-west-1',
  POWERTOOLS_LOG_LEVEL: 'SILENT',
};

describe('get-order handler', () => {
  it.each(['ORDERS_TABLE', 'OUTBOX_TABLE'])(
    'fails loudly at start with a ConfigError naming %s',
    (setting) => {
      const incomplete = { ...env, [setting]: undefined };

      expect(() => handler.withEnv(incomplete)).toThrow(ConfigError);
      expect(() => handler.withEnv(incomplete)).toThrow(`${setting} is not set`);
    },
  );

  it('reads the configured tables', async () => {
    const ddb = mockClient(DynamoDBDocumentClient);
    ddb.on(GetCommand).resolves({});
    ddb.on(QueryCommand).resolves({ Items: [] });

    const response = await handler.withEnv(env)(
      apiEvent({ method: 'GET', pathParameters: { orderId: 'order-1' } }),
      lambdaContext(),
    );

    expect(response.statusCode).toBe(404);
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input.TableName).toBe('orders-table');
    expect(ddb.commandCalls(QueryCommand)[0]?.args[0].input.TableName).toBe('outbox-table');
    ddb.restore();
  });
});
