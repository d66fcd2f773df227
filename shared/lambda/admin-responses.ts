/** The admin API's answers: JSON bodies, and the admin core's refusals mapped to their HTTP statuses. Pure. */
import type { APIGatewayProxyResult } from 'aws-lambda';
import {
  AdminError,
  AggregateInFlightError,
  DeliveryNotFoundError,
  EarlierGapError,
  InvalidAdminRequestError,
  MessageNotFoundError,
  ReasonRequiredError,
  WrongStatusError,
} from '../admin/admin-errors.ts';

/** One problem with a request, naming the field it concerns. */
export interface RequestProblem {
  readonly field: string;
  readonly problem: string;
}

/** A JSON response for API Gateway's proxy integration. */
export function adminJsonResponse(
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

/** A refusal: `{ error, code?, details: [{ field, problem }], ... }` with what the caller must change. */
export function adminErrorResponse(
  statusCode: number,
  body: {
    readonly error: string;
    readonly code?: string;
    readonly details?: readonly RequestProblem[];
    readonly [extra: string]: unknown;
  },
  headers: Readonly<Record<string, string>> = {},
): APIGatewayProxyResult {
  return adminJsonResponse(statusCode, { ...body, details: body.details ?? [] }, headers);
}

/**
 * The answer to an error of the admin core: an {@link AdminError} with its HTTP status (400, 404, 409, 501),
 * its code, the field at fault and what the refusal carries (the message's status, the messages in flight);
 * `undefined` for any other error, which the handler answers with a 500 that leaks nothing.
 * @example
 * adminErrorAnswer(new MessageNotFoundError('01J…')); // 404 { error, code: 'MESSAGE_NOT_FOUND', messageId }
 */
export function adminErrorAnswer(error: unknown): APIGatewayProxyResult | undefined {
  if (!(error instanceof AdminError)) return undefined;
  const base = { error: error.message, code: error.code };
  if (error instanceof InvalidAdminRequestError) {
    return adminErrorResponse(error.httpStatus, {
      ...base,
      details: [{ field: error.field, problem: error.message }],
    });
  }
  if (error instanceof ReasonRequiredError) {
    return adminErrorResponse(error.httpStatus, {
      ...base,
      details: [{ field: 'reason', problem: error.message }],
    });
  }
  if (error instanceof MessageNotFoundError) {
    return adminErrorResponse(error.httpStatus, { ...base, messageId: error.messageId });
  }
  if (error instanceof DeliveryNotFoundError) {
    return adminErrorResponse(error.httpStatus, {
      ...base,
      messageId: error.messageId,
      subscriber: error.subscriber,
      subscribers: error.subscribers,
    });
  }
  if (error instanceof WrongStatusError) {
    return adminErrorResponse(error.httpStatus, {
      ...base,
      messageId: error.messageId,
      status: error.status,
      allowed: error.allowed,
      ...(error.subscriber === undefined ? {} : { subscriber: error.subscriber }),
      ...(error.deliveries === undefined ? {} : { deliveries: error.deliveries }),
    });
  }
  if (error instanceof EarlierGapError) {
    return adminErrorResponse(error.httpStatus, {
      ...base,
      orderKey: error.orderKey,
      seq: error.seq,
      inboxTable: error.inboxTable,
      lastSeq: error.lastSeq,
    });
  }
  if (error instanceof AggregateInFlightError) {
    return adminErrorResponse(error.httpStatus, {
      ...base,
      aggregateId: error.aggregateId,
      inFlight: error.inFlight,
    });
  }
  return adminErrorResponse(error.httpStatus, base);
}
