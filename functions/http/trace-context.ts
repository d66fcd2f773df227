import type { APIGatewayProxyEvent } from 'aws-lambda';
import { xrayTraceHeader } from 'serverless-outbox';
import { headerValue } from './parse-request.ts';

/**
 * The request's W3C `traceparent`, or `undefined` when it has none or a malformed one. Trace context says a
 * receiver ignores a traceparent it cannot parse; here that also keeps arbitrary client text (a lone
 * surrogate, a huge value) out of the headers of the message written with the request, where it would make
 * the write fail.
 * @example
 * traceparentOf(event); // '00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01', or undefined
 */
export function traceparentOf(event: APIGatewayProxyEvent): string | undefined {
  const traceparent = headerValue(event, 'traceparent')?.trim();
  // The X-Ray form exists exactly for a well-formed traceparent (version not ff, ids not all zeros).
  return xrayTraceHeader(traceparent) === undefined ? undefined : traceparent;
}
