import { injectLambdaContext } from '@aws-lambda-powertools/logger/middleware';
import middy from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { Env } from 'serverless-outbox';
import { createLogger, type EnvHandler, handlerFromEnv } from 'serverless-outbox/lambda';
import { CORS_ALLOW_ORIGIN, corsOrigin } from './cors.ts';
import { httpErrorBoundary } from './error-boundary.ts';

/** The core of an HTTP function: an API Gateway proxy event in, a response out. */
export type HttpCore = (event: APIGatewayProxyEvent) => Promise<APIGatewayProxyResult>;

/**
 * An API Gateway proxy handler built from its environment, wrapped in the middleware every HTTP function of
 * the example uses: the Powertools logger with the Lambda context, and a 500 boundary for unexpected errors.
 * @example
 * export const handler = httpHandler('get-order', (env) => {
 *   const deps = { client: createDocumentClient(awsClientConfig(env)), ordersTable: requireEnv(env, 'ORDERS_TABLE') };
 *   return (event) => getOrder(event, deps);
 * });
 */
export function httpHandler(
  service: string,
  build: (env: Env) => HttpCore,
): EnvHandler<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return handlerFromEnv((env) => {
    const core = build(env);
    const logger = createLogger(service, env);
    // Middy runs `after` and `onError` in reverse order of use: the origin goes on after the boundary's 500.
    return middy(core)
      .use(corsOrigin(env[CORS_ALLOW_ORIGIN] || undefined))
      .use(injectLambdaContext(logger))
      .use(httpErrorBoundary(logger));
  });
}
