import type { APIGatewayProxyEvent } from 'aws-lambda';
import { type ApiEventOptions, apiEvent } from '../../support/factories.ts';

/** An API Gateway event whose body is sent as a JSON client sends it: `content-type: application/json`. */
export function jsonEvent(options: ApiEventOptions = {}): APIGatewayProxyEvent {
  return apiEvent({ ...options, headers: { 'content-type': 'application/json', ...options.headers } });
}

/** A base64 body, as API Gateway delivers one with `isBase64Encoded: true`. */
export function base64Body(bytes: readonly number[] | string): string {
  return (typeof bytes === 'string' ? Buffer.from(bytes, 'utf8') : Buffer.from(bytes)).toString('base64');
}
