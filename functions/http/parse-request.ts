import type { APIGatewayProxyEvent, APIGatewayProxyResult } from 'aws-lambda';
import { safeParse } from 'zod/mini';
import type { $ZodIssue, $ZodType } from 'zod/v4/core';
import en from 'zod/v4/locales/en.js';
import { bodyText } from './body-text.ts';
import { jsonContentTypeProblem } from './content-type.ts';
import { duplicateKeys } from './duplicate-keys.ts';
import { fieldPath } from './field-path.ts';
import { illFormedStrings } from './ill-formed-strings.ts';
import { errorResponse, type RequestProblem } from './responses.ts';

/** English messages for issues whose schema gives none: `zod/mini` loads no locale of its own. */
const ENGLISH = { error: en().localeError } as const;

/** A parsed request, or the 4xx response that explains why it could not be parsed. */
export type Parsed<T> =
  | { readonly ok: true; readonly value: T }
  | { readonly ok: false; readonly response: APIGatewayProxyResult };

/**
 * Turns zod issues into problems that name the field (`items[0].quantity`); an issue on the value itself
 * is named `root` (`(body)` for a request body, the parameter's name for a path parameter).
 */
export function describeIssues(issues: readonly $ZodIssue[], root = '(body)'): RequestProblem[] {
  return issues.map((issue) => {
    const field = issue.path.reduce<string>(
      (path, key) => fieldPath(path, typeof key === 'number' ? key : String(key)),
      '',
    );
    const keys = issue.code === 'unrecognized_keys' ? ` (${issue.keys.join(', ')})` : '';
    return { field: field || root, problem: `${issue.message}${keys}` };
  });
}

/**
 * Parses a JSON request body against a schema, before anything is written: 415 unless the content type is
 * `application/json` (UTF-8); 400 for a body that is not valid UTF-8, too large, empty or malformed JSON,
 * for a key repeated in one object, a string with a lone surrogate, or a schema violation (every bad field
 * named).
 */
export function parseJsonBody<T>(
  event: APIGatewayProxyEvent,
  schema: $ZodType<T>,
  maxBytes: number,
): Parsed<T> {
  const contentType = jsonContentTypeProblem(headerValue(event, 'content-type'));
  if (contentType !== undefined) {
    return refuse(415, 'unsupported media type', [{ field: 'content-type', problem: contentType }]);
  }
  const text = bodyText(event, maxBytes);
  if (!text.ok) return text;
  if (text.value.trim() === '') {
    return refuse(400, 'request body is required', [{ field: '(body)', problem: 'empty' }]);
  }
  let json: unknown;
  try {
    json = JSON.parse(text.value);
  } catch (error) {
    const problem = error instanceof Error ? error.message : 'not JSON';
    return refuse(400, 'request body is not valid JSON', [{ field: '(body)', problem }]);
  }
  const duplicates = duplicateKeys(text.value);
  if (duplicates.length > 0) return refuse(400, 'request body has duplicate keys', duplicates);
  const illFormed = illFormedStrings(json);
  if (illFormed.length > 0) return refuse(400, 'request body is not valid Unicode', illFormed);
  return parseValue(json, schema, { error: 'invalid request body' });
}

function refuse(statusCode: number, error: string, details: readonly RequestProblem[]): Parsed<never> {
  return { ok: false, response: errorResponse(statusCode, error, details) };
}

/** Validates a value (a path parameter named `field`, a parsed body) against a schema, or builds the 400. */
export function parseValue<T>(
  value: unknown,
  schema: $ZodType<T>,
  answer: { readonly error: string; readonly field?: string },
): Parsed<T> {
  const parsed = safeParse(schema, value, ENGLISH);
  if (parsed.success) return { ok: true, value: parsed.data };
  const details = describeIssues(parsed.error.issues, answer.field ?? '(body)');
  return { ok: false, response: errorResponse(400, answer.error, details) };
}

/** A request header by case-insensitive name (API Gateway keeps the client's casing). */
export function headerValue(event: APIGatewayProxyEvent, name: string): string | undefined {
  const wanted = name.toLowerCase();
  for (const [key, value] of Object.entries(event.headers ?? {})) {
    if (key.toLowerCase() === wanted && value !== undefined) return value;
  }
  return undefined;
}
