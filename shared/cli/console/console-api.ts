/**
 * The console's JSON API, which its page calls: reads of the outbox and the subscribers' stacks, the single
 * actions (replay, cancel, skip, erase) and the bulk jobs (a failure group's replay, a redrive). Every read and every
 * change goes through the admin core (`OutboxAdmin`, `SubscriberAdmin` and their functions), the same code the CLI
 * and the admin API run: the console adds no write path of its own.
 */
import { AdminError, InvalidAdminRequestError, ReasonRequiredError } from '../../admin/admin-errors.ts';
import { rateOf } from '../../admin/admin-input.ts';
import { OutboxAdmin } from '../../admin/outbox-admin.ts';
import { ConfigError, describeError } from '../../errors.ts';
import { formatSkipOrderGap } from '../format-output.ts';
import { readAggregatePage } from './aggregate-page.ts';
import { readAudit } from './audit-entries.ts';
import type { JobRegistry, JobSnapshot } from './bulk-jobs.ts';
import { groupByCause, membersOf } from './cause-groups.ts';
import type { ConsoleContext } from './console-context.ts';
import {
  deadLetterPlaceOf,
  PEEK_LIMIT,
  peekDeadLetters,
  readDeadLetterQueues,
} from './dead-letter-queues.ts';
import { redriveDeadLetterQueue } from './dead-letter-redrive.ts';
import { failedDeliveries, readFailures } from './failures.ts';
import { replayGroup } from './group-replay.ts';
import { readClaimCheckedPayload, readMessagePage } from './message-page.ts';
import { readOverview } from './overview.ts';
import { search } from './search.ts';

/** A request to the API, as the server has parsed it. */
export interface ApiRequest {
  readonly method: string;
  /** The path below `/api`, e.g. `/messages/01J…/replay`. */
  readonly path: string;
  readonly query: URLSearchParams;
  /** The JSON body of a POST; `{}` for a GET. */
  readonly body: Readonly<Record<string, unknown>>;
}

/** The API's answer: an HTTP status and a JSON body. */
export interface ApiAnswer {
  readonly status: number;
  readonly body: unknown;
}

const DEFAULTS = {
  /** Replays or moves per second a bulk job goes at unless the operator says otherwise (as the CLI's --rate). */
  ratePerSecond: 10,
  /** Messages a peek shows unless asked for more. */
  peek: 10,
  /** Messages per page of the messages view. */
  pageSize: 50,
} as const;

type Handler = (request: ApiRequest, params: readonly string[]) => Promise<ApiAnswer>;

/**
 * The API over one console's context and jobs.
 * @example
 * const api = new ConsoleApi(context, jobs);
 * const answer = await api.handle({ method: 'GET', path: '/overview', query: new URLSearchParams(), body: {} });
 */
export class ConsoleApi {
  readonly #context: ConsoleContext;
  readonly #jobs: JobRegistry;
  readonly #routes: readonly (readonly [string, RegExp, Handler])[];

  constructor(context: ConsoleContext, jobs: JobRegistry) {
    this.#context = context;
    this.#jobs = jobs;
    const id = '([^/]+)';
    this.#routes = [
      ['GET', /^\/session$/, () => this.#session()],
      ['GET', /^\/overview$/, async () => ok(await readOverview(this.#context))],
      ['GET', /^\/failures$/, async () => ok(await readFailures(this.#context.deps))],
      ['POST', /^\/failures\/replay$/, (request) => this.#replayGroup(request)],
      ['POST', /^\/ordering\/skip$/, (request) => this.#skip(request)],
      ['GET', /^\/messages$/, (request) => this.#messages(request)],
      [
        'GET',
        new RegExp(`^/messages/${id}$`),
        async (_, [messageId]) => ok(await readMessagePage(this.#context.deps, messageId ?? '')),
      ],
      ['GET', new RegExp(`^/messages/${id}/payload$`), (_, [messageId]) => this.#payload(messageId ?? '')],
      [
        'POST',
        new RegExp(`^/messages/${id}/(replay|cancel)$`),
        (request, [messageId, action]) =>
          this.#messageAction(request, messageId ?? '', action === 'cancel' ? 'cancel' : 'replay'),
      ],
      [
        'GET',
        new RegExp(`^/aggregates/${id}$`),
        async (_, [aggregateId]) => ok(await readAggregatePage(this.#context.deps, aggregateId ?? '')),
      ],
      [
        'POST',
        new RegExp(`^/aggregates/${id}/erase$`),
        (request, [aggregateId]) => this.#erase(request, aggregateId ?? ''),
      ],
      ['GET', /^\/dead-letters$/, async () => ok({ owners: await readDeadLetterQueues(this.#context) })],
      ['POST', /^\/dead-letters\/peek$/, (request) => this.#peek(request)],
      ['POST', /^\/dead-letters\/redrive$/, (request) => this.#redrive(request)],
      [
        'GET',
        /^\/audit$/,
        async (request) =>
          ok(
            await readAudit(this.#context, {
              subject: request.query.get('subject') ?? '',
              actor: request.query.get('actor') ?? '',
            }),
          ),
      ],
      ['GET', /^\/search$/, (request) => this.#search(request)],
      ['GET', /^\/jobs$/, async () => ok({ jobs: this.#jobs.list() })],
      [
        'GET',
        new RegExp(`^/jobs/${id}$`),
        async (_, [jobId]) => this.#job(this.#jobs.get(jobId ?? ''), jobId ?? ''),
      ],
      [
        'POST',
        new RegExp(`^/jobs/${id}/cancel$`),
        async (_, [jobId]) => this.#job(this.#jobs.cancel(jobId ?? ''), jobId ?? ''),
      ],
    ];
  }

  /** Answers `request`; `undefined` when no route has its method and path. */
  async handle(request: ApiRequest): Promise<ApiAnswer | undefined> {
    for (const [method, pattern, handler] of this.#routes) {
      const match = pattern.exec(request.path);
      if (match === null || method !== request.method) continue;
      const params = match.slice(1).map((part) => decodeURIComponent(part));
      try {
        return await handler(request, params);
      } catch (error) {
        return failure(error);
      }
    }
    return undefined;
  }

  async #session(): Promise<ApiAnswer> {
    const context = this.#context;
    return ok({
      stackName: context.stackName,
      ...(context.outboxName === undefined ? {} : { outboxName: context.outboxName }),
      actor: await context.actor(),
      subscribers: context.subscribers.map(({ subscriber, stackName, problem }) => ({
        subscriber,
        ...(stackName === undefined ? {} : { stackName }),
        ...(problem === undefined ? {} : { problem }),
      })),
      topics: [
        ...new Set([...Object.keys(context.deps.topicQueues), ...Object.keys(context.subscriptions)]),
      ].sort(),
      notes: context.notes,
    });
  }

  async #messages(request: ApiRequest): Promise<ApiAnswer> {
    const text = (name: string) => {
      const value = request.query.get(name)?.trim();
      return value === undefined || value === '' ? undefined : value;
    };
    const to = text('to');
    const page = await new OutboxAdmin(this.#context.deps).listMessages({
      ...optional('status', text('status')),
      ...optional('topic', text('topic')),
      ...optional('subscriber', text('subscriber')),
      ...optional('since', text('from')),
      ...optional('cursor', text('cursor')),
      limit: DEFAULTS.pageSize,
    });
    // The indexes sort by creation within a partition only, and `to` is no index bound: it filters the page.
    const until = to === undefined ? undefined : Date.parse(to);
    if (until !== undefined && Number.isNaN(until)) {
      throw new InvalidAdminRequestError('to', `must be an ISO-8601 instant, got ${to}`);
    }
    const items =
      until === undefined ? page.items : page.items.filter((item) => Date.parse(item.createdAt) <= until);
    return ok({ ...page, items });
  }

  async #payload(messageId: string): Promise<ApiAnswer> {
    const store = this.#context.claimChecks;
    if (store === undefined) {
      throw new ConfigError('this console reads no claim-checked payloads (no S3 client)');
    }
    return ok(await readClaimCheckedPayload(this.#context.deps, store, messageId));
  }

  async #messageAction(
    request: ApiRequest,
    messageId: string,
    action: 'replay' | 'cancel',
  ): Promise<ApiAnswer> {
    const admin = new OutboxAdmin(this.#context.deps);
    const subscriber = textField(request.body, 'subscriber');
    const input = {
      messageId,
      ...optional('subscriber', subscriber),
      reason: textField(request.body, 'reason') ?? '',
      actor: await this.#context.actor(),
    };
    return ok(action === 'replay' ? await admin.replay(input) : await admin.cancel(input));
  }

  async #erase(request: ApiRequest, aggregateId: string): Promise<ApiAnswer> {
    const confirm = textField(request.body, 'confirm');
    if (confirm !== aggregateId) {
      throw new InvalidAdminRequestError(
        'confirm',
        `must repeat the aggregate id (${aggregateId}) to erase its messages`,
      );
    }
    const reason = textField(request.body, 'reason') ?? '';
    return ok(
      await new OutboxAdmin(this.#context.deps).erase({
        aggregateId,
        reason,
        actor: await this.#context.actor(),
      }),
    );
  }

  async #skip(request: ApiRequest): Promise<ApiAnswer> {
    const result = await new OutboxAdmin(this.#context.deps).skipOrderGap({
      orderKey: textField(request.body, 'orderKey') ?? '',
      seq: numberField(request.body, 'seq') ?? Number.NaN,
      ...optional('subscriber', textField(request.body, 'subscriber')),
      reason: textField(request.body, 'reason') ?? '',
      actor: await this.#context.actor(),
    });
    // What the CLI prints for it: the skipped message, each cursor, what became of the next seq.
    return ok({ result, summary: formatSkipOrderGap(result) });
  }

  async #replayGroup(request: ApiRequest): Promise<ApiAnswer> {
    const cause = textField(request.body, 'cause');
    if (cause === undefined) throw new InvalidAdminRequestError('cause', 'is required: which failure group');
    const reason = textField(request.body, 'reason');
    if (reason === undefined) throw new ReasonRequiredError('replay');
    const ratePerSecond = rateOf(numberField(request.body, 'ratePerSecond') ?? DEFAULTS.ratePerSecond);
    const running = this.#jobs.running('replay', { cause });
    if (running !== undefined)
      return {
        status: 409,
        body: {
          error: { code: 'JOB_RUNNING', message: `this group is being replayed already (job ${running.id})` },
          job: running,
        },
      };
    const failed = await failedDeliveries(this.#context.deps);
    const targets = membersOf(failed, cause);
    const group = groupByCause(targets)[0];
    if (group === undefined) {
      return notFound(
        'NO_SUCH_GROUP',
        'no FAILED delivery has this cause now: it may have been replayed already',
      );
    }
    const actor = await this.#context.actor();
    const job = this.#jobs.start({
      kind: 'replay',
      title: `replay ${targets.length} FAILED ${targets.length === 1 ? 'delivery' : 'deliveries'}: ${group.kind === '' ? '' : `${group.kind}: `}${group.message}`,
      target: { cause },
      reason,
      actor,
      ratePerSecond,
      total: targets.length,
      run: (control) =>
        replayGroup(
          this.#context.deps,
          {
            targets: targets.map(({ messageId, subscriber }) => ({
              messageId,
              ...optional('subscriber', subscriber),
            })),
            cause: `${group.kind === '' ? '' : `${group.kind}: `}${group.message}`,
            reason,
            actor,
            ratePerSecond,
          },
          control,
        ),
    });
    return { status: 202, body: { job } };
  }

  async #peek(request: ApiRequest): Promise<ApiAnswer> {
    const queueUrl = textField(request.body, 'queueUrl') ?? '';
    deadLetterPlaceOf(this.#context, queueUrl);
    const running = this.#jobs.running('redrive', { queueUrl });
    if (running !== undefined) {
      return {
        status: 409,
        body: {
          error: {
            code: 'JOB_RUNNING',
            message: `a redrive of this queue is running (job ${running.id}): a peek would hide messages from it`,
          },
          job: running,
        },
      };
    }
    const max = numberField(request.body, 'max') ?? DEFAULTS.peek;
    const messages = await peekDeadLetters(this.#context, {
      queueUrl,
      max: Math.min(max, PEEK_LIMIT),
      actor: await this.#context.actor(),
    });
    return ok({ queueUrl, messages });
  }

  async #redrive(request: ApiRequest): Promise<ApiAnswer> {
    const queueUrl = textField(request.body, 'queueUrl') ?? '';
    const place = deadLetterPlaceOf(this.#context, queueUrl);
    const topic = textField(request.body, 'topic');
    const reason = textField(request.body, 'reason');
    if (reason === undefined) throw new ReasonRequiredError('redrive');
    const ratePerSecond = rateOf(numberField(request.body, 'ratePerSecond') ?? DEFAULTS.ratePerSecond);
    const running = this.#jobs.running('redrive', { queueUrl });
    if (running !== undefined) {
      return {
        status: 409,
        body: {
          error: { code: 'JOB_RUNNING', message: `this queue is being redriven already (job ${running.id})` },
          job: running,
        },
      };
    }
    const { visible } = await place.deps.queues.depth(queueUrl);
    const actor = await this.#context.actor();
    const queueName = queueUrl.split('/').filter(Boolean).at(-1) ?? queueUrl;
    const job = this.#jobs.start({
      kind: 'redrive',
      title: `redrive ${topic === undefined ? 'every message' : `the ${topic} messages`} of ${queueName}`,
      target: { queueUrl, ...optional('topic', topic) },
      reason,
      actor,
      ratePerSecond,
      total: visible,
      run: (control) =>
        redriveDeadLetterQueue(
          place,
          {
            deadLetterQueueUrl: queueUrl,
            ...optional('topic', topic),
            reason,
            actor,
            ratePerSecond,
            expected: visible,
          },
          control,
        ),
    });
    return { status: 202, body: { job } };
  }

  async #search(request: ApiRequest): Promise<ApiAnswer> {
    const query = request.query.get('q') ?? '';
    const found = await search(this.#context.deps, query);
    return found === undefined
      ? notFound('NOT_FOUND', `no message, aggregate or order key ${query}`)
      : ok(found);
  }

  #job(job: JobSnapshot | undefined, jobId: string): ApiAnswer {
    return job === undefined
      ? notFound('NO_SUCH_JOB', `no job ${jobId} in this console (jobs are kept while it runs)`)
      : ok({ job });
  }
}

function ok(body: unknown): ApiAnswer {
  return { status: 200, body };
}

function notFound(code: string, message: string): ApiAnswer {
  return { status: 404, body: { error: { code, message } } };
}

/** The answer to an error: an admin refusal with its own status, a configuration problem 400, anything else 500. */
export function failure(error: unknown): ApiAnswer {
  if (error instanceof AdminError) {
    return { status: error.httpStatus, body: { error: { code: error.code, message: error.message } } };
  }
  if (error instanceof ConfigError) {
    return { status: 400, body: { error: { code: error.code, message: error.message } } };
  }
  return { status: 500, body: { error: { code: 'ERROR', message: describeError(error) } } };
}

/** `{ [name]: value }`, or nothing for an absent value. */
function optional<Name extends string>(name: Name, value: string | undefined): { [key in Name]?: string } {
  return (value === undefined ? {} : { [name]: value }) as { [key in Name]?: string };
}

/** A text field of a body, trimmed; `undefined` when absent or empty. */
function textField(body: Readonly<Record<string, unknown>>, name: string): string | undefined {
  const value = body[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new InvalidAdminRequestError(name, 'must be text');
  return value.trim() === '' ? undefined : value.trim();
}

/** A number field of a body; `undefined` when absent. */
function numberField(body: Readonly<Record<string, unknown>>, name: string): number | undefined {
  const value = body[name];
  if (value === undefined || value === null || value === '') return undefined;
  const number = typeof value === 'number' ? value : Number(value);
  if (!Number.isFinite(number))
    throw new InvalidAdminRequestError(name, `must be a number, got ${String(value)}`);
  return number;
}
