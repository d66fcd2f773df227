import { DynamoDBDocumentClient, PutCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/inventory/put-stock/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import { apiEvent, lambdaContext } from '../../../support/factories.ts';
import { jsonEvent } from '../../http/json-event.ts';

const env = { INVENTORY_TABLE: 'inventory-table', AWS_REGION: 'eu-west-1', POWERTOOLS_LOG_LEVEL: 'SILENT' };

describe('put-stock handler', () => {
  it('fails loudly at start with a ConfigError naming INVENTORY_TABLE', () => {
    expect(() => handler.withEnv({ POWERTOOLS_LOG_LEVEL: 'SILENT' })).toThrow(ConfigError);
    expect(() => handler.withEnv({ POWERTOOLS_LOG_LEVEL: 'SILENT' })).toThrow('INVENTORY_TABLE is not set');
  });

  it('writes to the configured table', async () => {
    const ddb = mockClient(DynamoDBDocumentClient);
    ddb.on(PutCommand).resolves({});

    const response = await handler.withEnv(env)(
      jsonEvent({ method: 'PUT', pathParameters: { sku: 'SKU-1' }, body: { available: 4 } }),
      lambdaContext(),
    );

    expect(response.statusCode).toBe(200);
    expect(ddb.commandCalls(PutCommand)[0]?.args[0].input.TableName).toBe('inventory-table');
    ddb.restore();
  });

  it('answers 415 to a body sent as text/plain, and writes nothing', async () => {
    const ddb = mockClient(DynamoDBDocumentClient);

    const response = await handler.withEnv(env)(
      apiEvent({
        method: 'PUT',
        pathParameters: { sku: 'SKU-1' },
        body: { available: 4 },
        headers: { 'content-type': 'text/plain;charset=UTF-8' },
      }),
      lambdaContext(),
    );

    expect(response.statusCode).toBe(415);
    expect(JSON.parse(response.body).error).toBe('unsupported media type');
    expect(ddb.calls()).toHaveLength(0);
    ddb.restore();
  });
});
