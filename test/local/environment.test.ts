import { describe, expect, it } from 'vitest';
import {
  functionEnvironment,
  functionEnvironments,
  MissingOutputError,
  resolveEnvValue,
  serviceName,
} from '../../infra/local/environment.ts';
import {
  deadLetterQueueOutputName,
  queueOutputName,
  tableOutputName,
  topology,
} from '../../infra/topology.ts';

const ENDPOINT = 'http://127.0.0.1:5000';
const outputs: Record<string, string> = {
  [tableOutputName('orders')]: 'orders-table',
  [tableOutputName('inventory')]: 'inventory-table',
  [tableOutputName('outbox')]: 'outbox-table',
  [tableOutputName('inbox')]: 'inbox-table',
  [queueOutputName('orderEvents')]: 'https://sqs.us-east-1.amazonaws.com/123456789012/order-events',
  [queueOutputName('relayFailures')]: 'https://sqs.us-east-1.amazonaws.com/123456789012/relay-failures',
  [deadLetterQueueOutputName('orderEvents')]:
    'https://sqs.us-east-1.amazonaws.com/123456789012/order-events-dlq',
  [deadLetterQueueOutputName('relayFailures')]:
    'https://sqs.us-east-1.amazonaws.com/123456789012/relay-failures-dlq',
};

describe('resolveEnvValue', () => {
  it('resolves table names, queue URLs, topic routes and literals from the stack outputs', () => {
    expect(resolveEnvValue({ tableName: 'outbox' }, outputs, 'x')).toBe('outbox-table');
    expect(resolveEnvValue({ queueUrl: 'orderEvents' }, outputs, 'x')).toBe(
      outputs[queueOutputName('orderEvents')],
    );
    expect(JSON.parse(resolveEnvValue({ topicRoutes: true }, outputs, 'x'))).toEqual({
      'order.created': outputs[queueOutputName('orderEvents')],
    });
    expect(resolveEnvValue({ literal: '42' }, outputs, 'x')).toBe('42');
    expect(resolveEnvValue({ deadLetterQueueUrl: 'orderEvents' }, outputs, 'x')).toBe(
      outputs[deadLetterQueueOutputName('orderEvents')],
    );
    expect(
      JSON.parse(resolveEnvValue({ tableNamesByTopic: { 'order.created': 'inbox' } }, outputs, 'x')),
    ).toEqual({
      'order.created': 'inbox-table',
    });
  });

  it('names the missing output and who needed it', () => {
    expect(() => resolveEnvValue({ tableName: 'orders' }, {}, 'createOrder.ORDERS_TABLE')).toThrow(
      MissingOutputError,
    );
    expect(() => resolveEnvValue({ tableName: 'orders' }, {}, 'createOrder.ORDERS_TABLE')).toThrow(
      /ordersTableName \(needed by createOrder\.ORDERS_TABLE\)/,
    );
  });
});

describe('functionEnvironment', () => {
  it('adds the emulator endpoint, region, dummy credentials and Powertools settings', () => {
    const env = functionEnvironment('createOrder', topology.functions.createOrder, {
      endpoint: ENDPOINT,
      outputs,
    });
    expect(env).toMatchObject({
      ORDERS_TABLE: 'orders-table',
      OUTBOX_TABLE: 'outbox-table',
      AWS_ENDPOINT_URL: ENDPOINT,
      AWS_REGION: 'us-east-1',
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      POWERTOOLS_SERVICE_NAME: 'create-order',
      POWERTOOLS_LOG_LEVEL: 'WARN',
    });
  });

  it('takes the log level it is given', () => {
    const env = functionEnvironment('relay', topology.functions.relay, {
      endpoint: ENDPOINT,
      outputs,
      logLevel: 'DEBUG',
    });
    expect(env.POWERTOOLS_LOG_LEVEL).toBe('DEBUG');
  });

  it('resolves every topology variable of every function', () => {
    const environments = functionEnvironments({ endpoint: ENDPOINT, outputs });
    for (const [key, spec] of Object.entries(topology.functions)) {
      for (const name of Object.keys(spec.environment)) {
        expect(environments[key as keyof typeof environments][name], `${key}.${name}`).toBeTruthy();
      }
    }
  });
});

describe('serviceName', () => {
  it('turns a topology key into kebab case', () => {
    expect(serviceName('inventoryConsumer')).toBe('inventory-consumer');
  });
});
