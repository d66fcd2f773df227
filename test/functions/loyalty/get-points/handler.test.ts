import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/loyalty/get-points/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import { apiEvent, lambdaContext } from '../../../support/factories.ts';

const env = { LOYALTY_TABLE: 'loyalty-table', AWS_REGION: 'eu-west-1', POWERTOOLS_LOG_LEVEL: 'SILENT' };

describe('get-points handler', () => {
  it('fails loudly at start with a ConfigError naming LOYALTY_TABLE', () => {
    expect(() => handler.withEnv({})).toThrow(ConfigError);
    expect(() => handler.withEnv({})).toThrow('LOYALTY_TABLE is not set');
  });

  it('reads the configured table', async () => {
    const ddb = mockClient(DynamoDBDocumentClient);
    ddb.on(GetCommand).resolves({ Item: { pk: 'customer#c-1', customerId: 'c-1', points: 30 } });

    const response = await handler.withEnv(env)(
      apiEvent({ method: 'GET', pathParameters: { customerId: 'c-1' } }),
      lambdaContext(),
    );

    expect(response.statusCode).toBe(200);
    expect(JSON.parse(response.body)).toEqual({ customerId: 'c-1', points: 30 });
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input.TableName).toBe('loyalty-table');
    ddb.restore();
  });

  it('answers 404 through the deployed middleware for a customer never seen', async () => {
    const ddb = mockClient(DynamoDBDocumentClient);
    ddb.on(GetCommand).resolves({});

    const response = await handler.withEnv(env)(
      apiEvent({ method: 'GET', pathParameters: { customerId: 'c-9' } }),
      lambdaContext(),
    );

    expect(response.statusCode).toBe(404);
    expect(JSON.parse(response.body)).toMatchObject({ error: 'customer not found' });
    ddb.restore();
  });
});
