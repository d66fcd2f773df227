import { DynamoDBDocumentClient, GetCommand } from '@aws-sdk/lib-dynamodb';
import { mockClient } from 'aws-sdk-client-mock';
import { describe, expect, it } from 'vitest';
import { handler } from '../../../../functions/inventory/get-stock/handler.ts';
import { ConfigError } from '../../../../shared/errors.ts';
import { apiEvent, lambdaContext } from '../../../support/factories.ts';

describe('get-stock handler', () => {
  it('fails loudly at start with a ConfigError naming INVENTORY_TABLE', () => {
    expect(() => handler.withEnv({})).toThrow(ConfigError);
    expect(() => handler.withEnv({})).toThrow('INVENTORY_TABLE is not set');
  });

  it('reads the configured table', async () => {
    const ddb = mockClient(DynamoDBDocumentClient);
    ddb.on(GetCommand).resolves({ Item: { sku: 'SKU-1', available: 3 } });

    const response = await handler.withEnv({
      INVENTORY_TABLE: 'inventory-table',
      AWS_REGION: 'eu-west-1',
      POWERTOOLS_LOG_LEVEL: 'SILENT',
    })(apiEvent({ method: 'GET', pathParameters: { sku: 'SKU-1' } }), lambdaContext());

    expect(JSON.parse(response.body)).toEqual({ sku: 'SKU-1', available: 3 });
    expect(ddb.commandCalls(GetCommand)[0]?.args[0].input.TableName).toBe('inventory-table');
    ddb.restore();
  });
});
