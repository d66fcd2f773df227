import { Tracer } from '@aws-lambda-powertools/tracer';
import type { Env } from '../settings/setting.ts';

/**
 * A Powertools tracer named like the function's logger. It traces only inside Lambda with active tracing
 * (Powertools checks the execution environment), and not at all when `POWERTOOLS_TRACE_ENABLED` is `false`.
 * @example
 * const tracer = createTracer('outbox-relay', env);
 * const sqs = tracer.captureAWSv3Client(createSqsClient(awsClientConfig(env)));
 */
export function createTracer(defaultService: string, env: Env): Tracer {
  return new Tracer({
    serviceName: env.POWERTOOLS_SERVICE_NAME ?? defaultService,
    enabled: env.POWERTOOLS_TRACE_ENABLED?.trim().toLowerCase() !== 'false',
  });
}
