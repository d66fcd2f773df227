import { describe, expect, it } from 'vitest';
import { functionEnvironment } from '../../infra/dev/local/host/function-environment.ts';
import type { ResolutionContext } from '../../infra/dev/local/template/intrinsics.ts';
import type { FunctionDefinition } from '../../infra/dev/local/template/read-functions.ts';

const context: ResolutionContext = {
  region: 'eu-west-1',
  accountId: '000000000000',
  stackName: 'Notes-local',
  resources: new Map([['Notes', { type: 'AWS::DynamoDB::Table', physicalId: 'Notes-local-Notes-X1' }]]),
};

const writer: FunctionDefinition = {
  name: 'Writer',
  logicalId: 'Writer1234',
  entry: 'src/writer.ts',
  handlerExport: 'handler',
  timeoutSeconds: 4,
  memoryMb: 256,
  environment: {
    NOTES_TABLE: { Ref: 'Notes' },
    POWERTOOLS_LOG_LEVEL: 'INFO',
    AWS_REGION: 'us-west-2',
    RETRIES: 3,
  },
};

describe('functionEnvironment', () => {
  it('resolves the template variables and adds what Lambda and the emulator provide', () => {
    expect(
      functionEnvironment(writer, {
        endpoint: 'http://127.0.0.1:5000',
        context,
        physicalName: 'Notes-local-Writer-W1',
      }),
    ).toEqual({
      NOTES_TABLE: 'Notes-local-Notes-X1',
      POWERTOOLS_LOG_LEVEL: 'INFO',
      // Nothing reads embedded-metric-format lines locally.
      POWERTOOLS_METRICS_DISABLED: 'true',
      RETRIES: '3',
      AWS_ENDPOINT_URL: 'http://127.0.0.1:5000',
      AWS_REGION: 'eu-west-1',
      AWS_DEFAULT_REGION: 'eu-west-1',
      AWS_ACCESS_KEY_ID: 'testing',
      AWS_SECRET_ACCESS_KEY: 'testing',
      AWS_LAMBDA_FUNCTION_NAME: 'Notes-local-Writer-W1',
      AWS_LAMBDA_FUNCTION_MEMORY_SIZE: '256',
      AWS_LAMBDA_FUNCTION_VERSION: '$LATEST',
      AWS_LAMBDA_LOG_GROUP_NAME: '/aws/lambda/Notes-local-Writer-W1',
    });
  });

  it('puts the local log level over the template’s', () => {
    const env = functionEnvironment(writer, { endpoint: 'e', context, physicalName: 'w', logLevel: 'WARN' });
    expect(env.POWERTOOLS_LOG_LEVEL).toBe('WARN');
  });

  it('names the function and the variable it cannot resolve', () => {
    expect(() =>
      functionEnvironment(
        { ...writer, environment: { QUEUE_URL: { Ref: 'Missing' } } },
        { endpoint: 'e', context, physicalName: 'w' },
      ),
    ).toThrow(/^function Writer, variable QUEUE_URL: Ref Missing/);
  });
});
