import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import type { z } from 'zod';
import { errorResponse, type RequestProblem } from './responses.ts';

/** A parsed request, or the 400 response that explains why it could not be parsed. */
export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly response: APIGatewayProxyResult };

/**
 * Turns zod issues into problems that name the field (`items[0].quantity`); an issue on the value itself
 * is named `root` (`(body)` for a request body, the parameter's name for a path parameter).
 */
export function describeIssues(issues: readonly z.core.$ZodIssue[], root = '(body)'): RequestProblem[] {
  return issues.map((issue) => {
    const field = issue.path.reduce<string>(
      (path, key) =>
        typeof key === 'number' ? `${path}[${key}]` : path ? `${path}.${String(key)}` : String(key),
      '',
    );
    const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
    return { field: field || root, problem: `${issue.message}${keys}` };
  });
}

/**
 * Parses a JSON request body against a schema: a clear 400 for an oversized body, malformed JSON or a
 * schema violation (every bad field named), before anything is written.
 */
export function parseJsonBody<T>(
  event: APIGatewayProxyEvent,
  schema: z.ZodType<T>,
  maxBytes: number,
): Parsed<T> {
  const raw = event.isBase64Encoded
    ? Buffer.from(event.body ?? '', 'base64').toString('utf8')
    : (event.body ?? '');
  const bytes = Buffer.byteLength(raw);
  if (bytes > maxBytes) {
    return {
      ok: false,
      response: errorResponse(400, 'request body too large', [
        { field: '(body)', problem: `${bytes} bytes exceeds the limit of ${maxBytes} bytes` },
      ]),
    };
  }
  if (raw.trim() === '') {
    return {
      ok: false,
      response: errorResponse(400, 'request body is required', [{ field: '(body)', problem: 'empty' }]),
    };
  }
  let json: unknown;
  try {
    json = JSON.parse(raw);
  } catch (error) {
    const problem = error instanceof Error ? error.message : 'not JSON';
    return {
      ok: false,
      response: errorResponse(400, 'request body is not valid JSON', [{ field: '(body)', problem }]),
    };
  }
  return parseValue(json, schema, 'invalid request body');
}

/** Validates a value (a path parameter named `field`, a parsed body) against a schema, or builds the 400. */
export function parseValue<T>(
  value: unknown,
  schema: z.ZodType<T>,
  error: string,
  field = '(body)',
): Parsed<T> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return { ok: true, value: parsed.data };
  return { ok: false, response: errorResponse(400, error, describeIssues(parsed.error.issues, field)) };
}

/** A request header by case-insensitive name (API Gateway keeps the client's casing). */
export function headerValue(event: APIGatewayProxyEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}
