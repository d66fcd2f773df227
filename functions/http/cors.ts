import type { MiddlewareObj } from '@middy/core';
import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';

/** The variable that names the one origin a browser may call the API from; unset, no CORS header is sent. */
export const CORS_ALLOW_ORIGIN = 'CORS_ALLOW_ORIGIN';

/**
 * Adds `access-control-allow-origin` to every answer of the handler — errors and the 500 boundary's included —
 * when the stack configured CORS, so a browser reads the handlers' answers as it reads the gateway's own.
 * One origin, as the gateway responses carry: an answer cannot choose among several without echoing input.
 */
export function corsOrigin(
  origin: string | undefined,
): MiddlewareObj<APIGatewayProxyEvent, APIGatewayProxyResult> {
  const withOrigin = (response: APIGatewayProxyResult | null): APIGatewayProxyResult | null =>
    origin === undefined || response === null || response === undefined
      ? response
      : { ...response, headers: { ...response.headers, 'access-control-allow-origin': origin } };
  return {
    after: async (request) => {
      request.response = withOrigin(request.response);
    },
    onError: async (request) => {
      request.response = withOrigin(request.response);
    },
  };
}
