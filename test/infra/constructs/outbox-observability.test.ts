import * as lambda from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import {
  type CfnTemplate,
  environmentOf,
  functionId,
  idsOfType,
  propertiesOf,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
  XRAY_STATEMENT,
} from '../template-queries.ts';
import { CONSUMER_ENTRY, outboxService } from './outbox-service.ts';

/** Every function an outbox with a consumer and an archive builds, by the name the local runtime gives it. */
const FUNCTIONS = ['Outbox/Relay', 'Outbox/Sweeper', 'Outbox/Consumer', 'Outbox/Archiver'];

/** The template of an outbox with a consumer and an archive, built from `props`. */
function fullOutbox(props: Parameters<typeof outboxService>[0] = {}): CfnTemplate {
  const service = outboxService({ archive: true, ...props });
  service.outbox.addConsumer('Consumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
  return templateOf(service.stack);
}

let json: CfnTemplate;

beforeAll(() => {
  json = fullOutbox();
}, SYNTH_TIMEOUT_MS);

describe('TransactionalOutbox tracing and metrics', () => {
  it('builds the functions it is expected to', () => {
    expect(idsOfType(json, 'AWS::Lambda::Function')).toHaveLength(FUNCTIONS.length);
  });

  it.each(FUNCTIONS)('traces %s with X-Ray, which may write its traces', (name) => {
    const id = functionId(json, name);
    expect(propertiesOf(json, id).TracingConfig).toEqual({ Mode: 'Active' });
    expect(roleStatements(json, id)).toContainEqual(XRAY_STATEMENT);
  });

  it.each(FUNCTIONS)('tells %s to publish its metrics in the ServerlessOutbox namespace', (name) => {
    expect(environmentOf(json, functionId(json, name)).POWERTOOLS_METRICS_NAMESPACE).toBe('ServerlessOutbox');
  });

  it.each(FUNCTIONS)('tells %s the namespace it is given, over any its function props name', (name) => {
    const custom = fullOutbox({
      metricsNamespace: 'Shop/Orders',
      relayFunctionProps: { environment: { POWERTOOLS_METRICS_NAMESPACE: 'Elsewhere' } },
    });
    expect(environmentOf(custom, functionId(custom, name)).POWERTOOLS_METRICS_NAMESPACE).toBe('Shop/Orders');
  });

  it('leaves tracing off where the function props say so', () => {
    const quiet = fullOutbox({ relayFunctionProps: { tracing: lambda.Tracing.DISABLED } });
    expect(propertiesOf(quiet, functionId(quiet, 'Outbox/Relay')).TracingConfig).toBeUndefined();
    expect(propertiesOf(quiet, functionId(quiet, 'Outbox/Sweeper')).TracingConfig).toEqual({
      Mode: 'Active',
    });
  });
});
