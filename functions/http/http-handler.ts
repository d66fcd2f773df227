import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Env } from '../../shared/config/require-setting.ts';
import { createLogger } from '../../shared/lambda/create-logger.ts';
import { httpErrorBoundary } from './error-boundary.ts';

/**
 * Wraps an API Gateway proxy core in the middleware every HTTP function uses: the Powertools logger with
 * the Lambda context, and a 500 boundary for unexpected errors.
 * @example
 * return httpHandler('get-order', env, (event) => getOrder(event, deps));
 */
export function httpHandler(
  service: string,
  env: Env,
  core: (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>,
) {
  const logger = createLogger(service, env);
  return middy(core).use(injectLambdaContext(logger)).use(httpErrorBoundary(logger));
}
