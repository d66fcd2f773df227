/**
 * The admin API's requests: which route a request is for and what it asks, parsed and checked before the
 * operations core is called. Pure: an API Gateway proxy event in, an {@link AdminCommand} or the 4xx answer out.
 */
import type { APIGatewayProxyEvent } from 'aws-lambda';
import * as z from 'zod/mini';
import type { $ZodIssue, $ZodType } from 'zod/v4/core';
import { LIST_LIMITS } from '../admin/list-messages.ts';
import { MessageStatus } from '../message/message-status.ts';
import { MAX_ORDER_KEY_LENGTH } from '../ordering/ordering.ts';
import { subscriberNameSchema } from '../receipts/receipt.ts';
import { safeParse } from '../validation/safe-parse.ts';
import type { RequestProblem } from './admin-responses.ts';

/** Operations per second of a bulk replay or a redrive when the request gives no `ratePerSecond`. */
export const DEFAULT_ADMIN_RATE_PER_SECOND = 10;

/** The longest reason kept (the core refuses longer ones too). */
const MAX_REASON_CHARACTERS = 500;

/** What an admin request asks for, checked. */
export type AdminCommand =
  | { readonly kind: 'list'; readonly query: ListQuery }
  | { readonly kind: 'show'; readonly messageId: string }
  | {
      readonly kind: 'replay' | 'cancel';
      readonly messageId: string;
      readonly reason: string;
      /** Only this subscriber's delivery; absent: every delivery the action applies to. */
      readonly subscriber?: string;
    }
  | { readonly kind: 'bulkReplay'; readonly body: BulkReplayBody }
  | { readonly kind: 'redrive'; readonly body: RedriveBody }
  | { readonly kind: 'stats'; readonly subscriber?: string }
  | { readonly kind: 'erase'; readonly aggregateId: string; readonly reason: string }
  | { readonly kind: 'skip'; readonly body: SkipBody };

/** A request the admin API refuses before calling the core: no such route, wrong method, bad input. */
export interface AdminRefusal {
  readonly statusCode: 400 | 404 | 405;
  readonly error: string;
  readonly details: readonly RequestProblem[];
  /** 405: the methods the path allows. */
  readonly allow?: readonly string[];
}

/** A parsed request, or why it was refused. */
export type ParsedAdminRequest =
  | { readonly ok: true; readonly command: AdminCommand }
  | { readonly ok: false; readonly refusal: AdminRefusal };

const text = z.string().check(z.trim(), z.minLength(1, 'must not be empty'));
const reason = z
  .string({ error: 'is required: say why, it is kept in the audit trail and the message history' })
  .check(
    z.trim(),
    z.minLength(1, 'is required: say why, it is kept in the audit trail and the message history'),
    z.maxLength(MAX_REASON_CHARACTERS, `must be at most ${MAX_REASON_CHARACTERS} characters`),
  );
const subscriber = z.string().check(z.trim(), z.minLength(1, 'must not be empty'));
const subscriberName = z.pipe(subscriber, subscriberNameSchema);
const rate = z._default(z.number().check(z.positive(), z.maximum(1_000)), DEFAULT_ADMIN_RATE_PER_SECOND);
const flag = z._default(z.boolean(), false);

const listQuerySchema = z.strictObject({
  status: z.optional(z.enum(Object.values(MessageStatus))),
  topic: z.optional(text),
  subscriber: z.optional(subscriberName),
  aggregateId: z.optional(text),
  since: z.optional(text),
  limit: z.optional(
    z.pipe(
      z.pipe(z.string().check(z.regex(/^\d+$/, 'must be a whole number')), z.transform(Number)),
      z.number().check(z.int(), z.minimum(1), z.maximum(LIST_LIMITS.maxLimit)),
    ),
  ),
  cursor: z.optional(text),
});
type ListQuery = z.infer<typeof listQuerySchema>;

const actionBodySchema = z.strictObject({ reason });

const messageActionBodySchema = z.strictObject({ reason, subscriber: z.optional(subscriberName) });

const statsQuerySchema = z.strictObject({ subscriber: z.optional(subscriberName) });

const bulkReplayBodySchema = z.strictObject({
  topic: text,
  subscriber: z.optional(subscriberName),
  from: z.optional(text),
  to: z.optional(text),
  includeCancelled: flag,
  ratePerSecond: rate,
  dryRun: flag,
  reason,
});
type BulkReplayBody = z.infer<typeof bulkReplayBodySchema>;

const redriveBodySchema = z.strictObject({
  topic: z.optional(text),
  messageIds: z.optional(
    z.array(text).check(z.minLength(1, 'must name at least one message (omit it to move every one)')),
  ),
  queue: z.optional(text),
  maxMessages: z.optional(z.number().check(z.int(), z.minimum(1))),
  ratePerSecond: rate,
  dryRun: flag,
  reason,
});
type RedriveBody = z.infer<typeof redriveBodySchema>;

const skipBodySchema = z.strictObject({
  orderKey: text.check(
    z.maxLength(MAX_ORDER_KEY_LENGTH, `must be at most ${MAX_ORDER_KEY_LENGTH} characters`),
  ),
  seq: z.number().check(z.int('must be a whole number'), z.minimum(1, 'must be 1 or more')),
  // The subscriber whose own sequence of the order key it is, for a topic delivered to subscribers.
  subscriber: z.optional(text),
  reason,
});
type SkipBody = z.infer<typeof skipBodySchema>;

/** One route: its method, its path under `/admin` (`{name}` a segment), and how its command is built. */
interface AdminRoute {
  readonly method: 'GET' | 'POST';
  readonly path: string;
  readonly parse: (request: RequestParts) => ParsedAdminRequest;
}

interface RequestParts {
  readonly parameters: Readonly<Record<string, string>>;
  readonly query: Readonly<Record<string, string | undefined>>;
  readonly body: unknown;
}

/** Every route of the admin API, relative to `/admin`; literal paths before parameterised ones. */
export const ADMIN_ROUTES: readonly AdminRoute[] = [
  {
    method: 'GET',
    path: '/messages',
    parse: ({ query }) =>
      checked(listQuerySchema, query, {
        error: 'invalid query',
        root: '(query)',
        command: (value) => ({
          kind: 'list',
          query: value,
        }),
      }),
  },
  {
    method: 'POST',
    path: '/messages/replay',
    parse: ({ body }) =>
      checked(bulkReplayBodySchema, body, {
        error: 'invalid request body',
        command: (value) => ({
          kind: 'bulkReplay',
          body: value,
        }),
      }),
  },
  {
    method: 'GET',
    path: '/messages/{id}',
    parse: ({ parameters }) => ({ ok: true, command: { kind: 'show', messageId: parameters.id ?? '' } }),
  },
  ...(['replay', 'cancel'] as const).map(
    (kind): AdminRoute => ({
      method: 'POST',
      path: `/messages/{id}/${kind}`,
      parse: ({ parameters, body }) =>
        checked(messageActionBodySchema, body, {
          error: 'invalid request body',
          command: (value) => ({
            kind,
            messageId: parameters.id ?? '',
            reason: value.reason,
            ...(value.subscriber === undefined ? {} : { subscriber: value.subscriber }),
          }),
        }),
    }),
  ),
  {
    method: 'POST',
    path: '/dlq/redrive',
    parse: ({ body }) =>
      checked(redriveBodySchema, body, {
        error: 'invalid request body',
        command: (value) => ({
          kind: 'redrive',
          body: value,
        }),
      }),
  },
  {
    method: 'GET',
    path: '/stats',
    parse: ({ query }) =>
      checked(statsQuerySchema, query, {
        error: 'invalid query',
        root: '(query)',
        command: (value) => ({
          kind: 'stats',
          ...(value.subscriber === undefined ? {} : { subscriber: value.subscriber }),
        }),
      }),
  },
  {
    // The order key travels in the body: it holds a `#`, which a path would have to escape.
    method: 'POST',
    path: '/ordering/skip',
    parse: ({ body }) =>
      checked(skipBodySchema, body, {
        error: 'invalid request body',
        command: (value) => ({
          kind: 'skip',
          body: value,
        }),
      }),
  },
  {
    method: 'POST',
    path: '/aggregates/{id}/erase',
    parse: ({ parameters, body }) =>
      checked(actionBodySchema, body, {
        error: 'invalid request body',
        command: (value) => ({
          kind: 'erase',
          aggregateId: parameters.id ?? '',
          reason: value.reason,
        }),
      }),
  },
];

/**
 * The command an admin request asks for, or its refusal: 404 for a path the admin API does not have, 405 for
 * a method the path does not take, 400 naming each bad field of the query or the JSON body.
 * @example
 * parseAdminRequest(event); // { ok: true, command: { kind: 'replay', messageId: '01J…', reason: 'fixed' } }
 */
export function parseAdminRequest(event: APIGatewayProxyEvent): ParsedAdminRequest {
  const segments = adminSegments(event);
  const method = event.httpMethod.toUpperCase();
  const onPath = ADMIN_ROUTES.map((route) => ({ route, parameters: matchPath(route.path, segments) })).filter(
    (candidate): candidate is { route: AdminRoute; parameters: Record<string, string> } =>
      candidate.parameters !== undefined,
  );
  const match = onPath.find((candidate) => candidate.route.method === method);
  if (match === undefined) {
    const path = `/admin/${segments.join('/')}`;
    if (onPath.length === 0) {
      return refuse({ statusCode: 404, error: `no admin route ${method} ${path}`, details: [] });
    }
    const allow = [...new Set(onPath.map((candidate) => candidate.route.method))];
    return refuse({ statusCode: 405, error: `${method} is not allowed on ${path}`, details: [], allow });
  }
  const body = match.route.method === 'POST' ? jsonBody(event) : { ok: true as const, value: undefined };
  if (!body.ok) return refuse(body.refusal);
  return match.route.parse({
    parameters: match.parameters,
    query: { ...event.queryStringParameters },
    body: body.value,
  });
}

/**
 * The path below `/admin`, as segments: the `{proxy+}` parameter when the route has one, else the request path
 * after its `admin` segment.
 */
function adminSegments(event: APIGatewayProxyEvent): string[] {
  const proxy = event.pathParameters?.proxy;
  const split = (path: string) => path.split('/').filter((segment) => segment !== '');
  if (proxy !== undefined) return split(proxy);
  const segments = split(event.path);
  const at = segments.indexOf('admin');
  return at < 0 ? segments : segments.slice(at + 1);
}

function matchPath(template: string, segments: readonly string[]): Record<string, string> | undefined {
  const parts = template.split('/').filter((part) => part !== '');
  if (parts.length !== segments.length) return undefined;
  const parameters: Record<string, string> = {};
  for (const [index, part] of parts.entries()) {
    const segment = segments[index] ?? '';
    const name = /^\{(\w+)\}$/.exec(part)?.[1];
    if (name !== undefined) parameters[name] = segment;
    else if (part !== segment) return undefined;
  }
  return parameters;
}

/** The JSON body of a POST: absent is `{}` (so a missing reason is named as such), malformed is a 400. */
function jsonBody(
  event: APIGatewayProxyEvent,
): { ok: true; value: unknown } | { ok: false; refusal: AdminRefusal } {
  const raw = event.isBase64Encoded ? Buffer.from(event.body ?? '', 'base64').toString('utf8') : event.body;
  if (raw === null || raw === undefined || raw.trim() === '') return { ok: true, value: {} };
  try {
    return { ok: true, value: JSON.parse(raw) as unknown };
  } catch (error) {
    const problem = error instanceof Error ? error.message : 'not JSON';
    return {
      ok: false,
      refusal: {
        statusCode: 400,
        error: 'request body is not valid JSON',
        details: [{ field: '(body)', problem }],
      },
    };
  }
}

function checked<T>(
  schema: $ZodType<T>,
  value: unknown,
  answer: {
    readonly error: string;
    readonly root?: string;
    readonly command: (value: T) => AdminCommand;
  },
): ParsedAdminRequest {
  const parsed = safeParse(schema, value);
  if (parsed.success) return { ok: true, command: answer.command(parsed.data) };
  return refuse({
    statusCode: 400,
    error: answer.error,
    details: describeIssues(parsed.error.issues, answer.root ?? '(body)'),
  });
}

/** Each zod issue as a problem naming its field; an unknown key is named itself. */
export function describeIssues(issues: readonly $ZodIssue[], root: string): RequestProblem[] {
  return issues.flatMap((issue) => {
    const field = issue.path.map(String).join('.');
    if (issue.code === 'unrecognized_keys') {
      return issue.keys.map((key) => ({
        field: field === '' ? key : `${field}.${key}`,
        problem: 'is not a field of this request',
      }));
    }
    return [{ field: field || root, problem: issue.message }];
  });
}

function refuse(refusal: AdminRefusal): ParsedAdminRequest {
  return { ok: false, refusal };
}
