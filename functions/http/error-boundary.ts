import type { Logger } from '@aws-lambda-powertools/logger';
import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { loggableError } from 'serverless-outbox';
import { jsonResponse } from './responses.ts';

/**
 * Turns an unexpected error into a logged 500 `{ error, requestId }` instead of API Gateway's bare 502,
 * without leaking internals to the caller.
 */
export function httpErrorBoundary(
  logger: Logger,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  return {
    onError: async (request) => {
      // The error reduced to name, message and codes: an SDK error object carries the items it failed on.
      logger.error('request failed', { error: loggableError(request.error) });
      request.response = jsonResponse(500, {
        error: 'internal error',
        requestId: request.context.awsRequestId,
      });
    },
  };
}
