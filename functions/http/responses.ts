import type { APIGatewayProxyResult } from 'aws-lambda';

/** A JSON response for API Gateway's proxy integration, with any extra `headers`. */
export function jsonResponse(
  statusCode: number,
  body: unknown,
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult {
  return {
    statusCode,
    headers: { ...headers, 'content-type': 'application/json' },
    body: JSON.stringify(body),
  };
}

/** One problem with a request, naming the field it concerns. */
export interface RequestProblem {
  readonly field: string;
  readonly problem: string;
}

/** A 4xx error response: `{ error, details }`. */
export function errorResponse(
  statusCode: number,
  error: string,
  details: readonly RequestProblem[] = [],
): APIGatewayProxyResult {
  return jsonResponse(statusCode, { error, details });
}
