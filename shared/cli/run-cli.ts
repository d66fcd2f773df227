/**
 * The `outbox` CLI: the operations core (`OutboxAdmin`) from a terminal, against AWS or an emulator
 * (`AWS_ENDPOINT_URL`), on the outbox found in a CloudFormation stack by its template metadata.
 */
import { readFile } from 'node:fs/promises';
import { resolve } from 'node:path';
import { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import { defaultProvider } from '@aws-sdk/credential-provider-node';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import { Command, CommanderError, InvalidArgumentError } from 'commander';
import { monotonicFactory } from 'ulid';
import type { AdminDeps } from '../admin/admin-deps.ts';
import { InvalidAdminRequestError, MoveTaskUnavailableError } from '../admin/admin-errors.ts';
import { deadLetterRoutes } from '../admin/dead-letter-routes.ts';
import { OutboxAdmin } from '../admin/outbox-admin.ts';
import type { RedriveInput } from '../admin/redrive-dead-letters.ts';
import { SubscriberAdmin, type SubscriberAdminDeps } from '../admin/subscriber-admin.ts';
import { DynamoAuditLog } from '../aws/audit-table.ts';
import {
  type AwsClientConfig,
  awsClientConfig,
  createDocumentClient,
  createS3Client,
  createSqsClient,
} from '../aws/clients.ts';
import { dynamoAdminDeps } from '../aws/dynamo-admin-deps.ts';
import { S3ClaimCheckStore } from '../aws/s3-claim-check-store.ts';
import { SqsAdminQueues } from '../aws/sqs-admin-queues.ts';
import type { ClaimCheckStore } from '../claim-check/claim-check-store.ts';
import { ConfigError, describeError, OutboxError } from '../errors.ts';
import { type ApiAnswer, callApi, isLocalApi, LOCAL_SIGNING_CREDENTIALS, signingRegion } from './call-api.ts';
import { DEFAULT_CONSOLE_PORT, runConsoleCommand } from './console/console-command.ts';
import { EXIT_CODES_HELP, ExitCode, exitCodeOf, exitCodeOfHttpStatus } from './exit-codes.ts';
import {
  formatActionResult,
  formatBulkReplay,
  formatErase,
  formatMessageDetails,
  formatMessagePage,
  formatMoveTasks,
  formatRecover,
  formatRedrive,
  formatSkipOrderGap,
  formatStats,
  formatSubscriberStats,
} from './format-output.ts';
import { loadHealthCheck } from './health-check.ts';
import { type CallerIdentity, operatorIdentity } from './operator-identity.ts';
import { type ProgressStream, progressReporter } from './progress.ts';
import { RecoverOutcome, recoverTopic } from './recover.ts';
import {
  type DiscoveredOutbox,
  type DiscoveredStack,
  type DiscoveredSubscriber,
  discoverStack,
  readStackKind,
  readStackOutputs,
  StackDiscoveryError,
  type StackKind,
} from './stack-discovery.ts';
import { chooseStackName, localStackNames, type StackLabel } from './stack-name.ts';

/** Clients and seams a test (or another front end) may give the CLI instead of the default ones. */
export interface CliClients {
  readonly cloudFormation?: CloudFormationClient;
  /** The operations core's dependencies for the discovered outbox. @default DynamoDB and SQS clients */
  readonly adminDeps?: (outbox: DiscoveredOutbox, config: AwsClientConfig) => AdminDeps;
  /** The dependencies of the operations on a subscriber's own stack. @default DynamoDB and SQS clients */
  readonly subscriberDeps?: (
    subscriber: DiscoveredSubscriber,
    config: AwsClientConfig,
  ) => SubscriberAdminDeps;
  /** The caller's ARN on AWS (STS GetCallerIdentity). */
  readonly callerIdentity?: CallerIdentity;
  readonly clock?: () => Date;
  readonly sleep?: (ms: number) => Promise<void>;
  /** Pause between two looks at the messages `recover` waits for. @default 2000 */
  readonly recoverPollIntervalMs?: number;
  /** Stops `outbox console`. @default SIGINT or SIGTERM */
  readonly consoleStop?: AbortSignal;
}

/** Where the CLI reads and writes. */
export interface CliIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: ProgressStream;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** Where `--health` modules are found from. @default process.cwd() */
  readonly cwd?: string;
  readonly clients?: CliClients;
}

/** Emulator settings when the environment gives none: the region emulators default to, dummy credentials. */
const EMULATOR_DEFAULTS = {
  region: 'us-east-1',
  credentials: { accessKeyId: 'testing', secretAccessKey: 'testing' },
} as const;

const DEFAULTS = { ratePerSecond: 10, waitSeconds: 300 } as const;

/**
 * The stack output that holds the REST API's URL: `apiUrl`, or the one output named `<service>ApiUrl` (the example's
 * `ordersApiUrl`, `inventoryApiUrl`, `loyaltyApiUrl`, one in each service's stack).
 */
const API_URL_OUTPUT = 'apiUrl';
const API_URL_SUFFIX = 'ApiUrl';

interface GlobalOptions {
  readonly stack?: string;
  readonly json?: boolean;
}

/**
 * Runs the CLI on `argv` (the arguments after the program name) and resolves with its exit code (see
 * {@link ExitCode}); never throws. Results go to stdout (one JSON document with `--json`), errors, notes and
 * progress to stderr.
 * @example
 * process.exitCode = await runCli(process.argv.slice(2), { stdout: process.stdout, stderr: process.stderr, env: process.env });
 */
export async function runCli(argv: readonly string[], io: CliIo): Promise<ExitCode> {
  const session = new Session(io);
  let exitCode: ExitCode = ExitCode.OK;
  const program = buildProgram(io, async (command, run) => {
    exitCode = (await run(session.globals(command))) ?? ExitCode.OK;
  });
  try {
    await program.parseAsync([...argv], { from: 'user' });
    return exitCode;
  } catch (error) {
    const code = exitCodeOf(error);
    // Commander has already printed its own errors (and the help).
    if (!(error instanceof CommanderError)) {
      io.stderr.write(`error: ${error instanceof Error ? error.message : String(error)}\n`);
      if (argv.includes('--json')) io.stdout.write(`${toJson(errorDocument(error, code))}\n`);
    }
    return code;
  } finally {
    session.close();
  }
}

type Action = (globals: GlobalOptions & { readonly session: Session }) => Promise<ExitCode | undefined>;
type Runner = (command: Command, run: Action) => Promise<void>;

function buildProgram(io: CliIo, runner: Runner): Command {
  const program = new Command()
    .name('outbox')
    .description(
      'Operate a serverless-outbox: inspect, replay, cancel, redrive, erase, recover, skip. Finds the outbox in a ' +
        'CloudFormation stack by its template metadata; AWS_ENDPOINT_URL points it at an emulator.',
    )
    .option(
      '--stack <name>',
      "the stack holding the outbox, or a subscriber's own stack for stats and redrive (default with " +
        'AWS_ENDPOINT_URL: the *-local stack holding an outbox)',
    )
    .option('--json', 'print one JSON document on stdout instead of tables')
    .addHelpText('after', EXIT_CODES_HELP)
    .exitOverride()
    .showHelpAfterError('(outbox --help lists the commands and options)')
    .configureOutput({
      writeOut: (text) => io.stdout.write(text),
      writeErr: (text) => io.stderr.write(text),
    });
  const action = (command: Command, run: Action) => runner(command, run);

  program
    .command('stats')
    .description(
      'counts per status, topic and subscriber, oldest PENDING and SENT-unconfirmed ages, DLQ depths; on a ' +
        "subscriber's own stack: its queue's and DLQ's depths, its inbox",
    )
    .option('--subscriber <name>', "only this subscriber's deliveries")
    .action(function (this: Command) {
      const { subscriber } = this.opts<{ subscriber?: string }>();
      return action(this, async ({ session }) => {
        const stack = await session.stack();
        if (stack.kind === 'subscriber') {
          const own = stack.subscriber.subscriber;
          if (subscriber !== undefined && subscriber !== own) {
            throw new InvalidAdminRequestError(
              '--subscriber',
              `names ${subscriber}, but ${stack.subscriber.stackName} is subscriber ${own}'s stack`,
            );
          }
          session.print(await session.subscriberAdmin(stack.subscriber).stats(), formatSubscriberStats);
          return undefined;
        }
        const stats = await (await session.admin()).stats(subscriber === undefined ? {} : { subscriber });
        session.print(stats, formatStats);
        return undefined;
      });
    });

  program
    .command('list')
    .description('a page of messages through the indexes (give at least one filter)')
    .option('--status <status>', 'PENDING, SENT, FAILED or CANCELLED (CONFIRMED with --aggregate-id)')
    .option('--topic <topic>')
    .option('--subscriber <name>', "only the deliveries to this subscriber (the message's own id is listed)")
    .option('--aggregate-id <id>')
    .option('--since <instant>', 'only messages created at or after this ISO-8601 instant')
    .option('--limit <n>', 'messages per page (1–500, default 50)', integerOption('--limit'))
    .option('--cursor <cursor>', 'the cursor the previous page printed')
    .action(function (this: Command) {
      const options = this.opts<{
        status?: string;
        topic?: string;
        subscriber?: string;
        aggregateId?: string;
        since?: string;
        limit?: number;
        cursor?: string;
      }>();
      return action(this, async ({ session }) => {
        const page = await (await session.admin()).listMessages(options);
        session.print(page, formatMessagePage);
        return undefined;
      });
    });

  program
    .command('show')
    .description(
      'a message: its stored record, each subscriber’s delivery (status, attempts, outcome, times, history) and ' +
        'its audit rows',
    )
    .argument('<id>', 'the message id')
    .action(function (this: Command, id: string) {
      return action(this, async ({ session }) => {
        const details = await (await session.admin()).showMessage(id);
        session.print(details, formatMessageDetails);
        return undefined;
      });
    });

  program
    .command('replay')
    .description(
      'FAILED or CANCELLED → PENDING: one message by id (every FAILED or CANCELLED delivery of it, or only ' +
        '--subscriber’s; a CONFIRMED one is never sent again), or a topic’s FAILED messages with --topic (paced)',
    )
    .argument('[id]', 'the message id (omit it with --topic)')
    .requiredOption('--reason <text>', 'why: kept in the audit trail and the message history')
    .option(
      '--subscriber <name>',
      "only this subscriber's delivery (with --topic: its deliveries of the topic)",
    )
    .option('--topic <topic>', 'bulk: replay the FAILED messages of this topic')
    .option('--from <instant>', 'bulk: created at or after this ISO-8601 instant')
    .option('--to <instant>', 'bulk: created at or before this ISO-8601 instant')
    .option('--include-cancelled', 'bulk: replay CANCELLED messages of the range too')
    .option('--rate <n>', 'bulk: replays per second at most', rateOption('--rate'), DEFAULTS.ratePerSecond)
    .option('--dry-run', 'bulk: list what would be replayed, change nothing')
    .action(function (this: Command, id: string | undefined) {
      const options = this.opts<{
        reason: string;
        subscriber?: string;
        topic?: string;
        from?: string;
        to?: string;
        includeCancelled?: boolean;
        rate: number;
        dryRun?: boolean;
      }>();
      return action(this, async ({ session }) => {
        const admin = await session.admin();
        const actor = await session.actor();
        if (id !== undefined) {
          const bulkOnly = ['topic', 'from', 'to', 'includeCancelled', 'dryRun'].filter(
            (name) => options[name as keyof typeof options] !== undefined,
          );
          if (bulkOnly.length > 0) {
            throw new InvalidAdminRequestError(
              `--${kebab(bulkOnly[0] ?? '')}`,
              'is for a bulk replay by --topic; omit the message id, or the option',
            );
          }
          session.print(
            await admin.replay({
              messageId: id,
              ...(options.subscriber === undefined ? {} : { subscriber: options.subscriber }),
              reason: options.reason,
              actor,
            }),
            formatActionResult,
          );
          return undefined;
        }
        if (options.topic === undefined) {
          throw new InvalidAdminRequestError('<id>', 'or --topic is required: which message(s) to replay');
        }
        const progress = progressReporter(io.stderr);
        const report = await admin.bulkReplay({
          topic: options.topic,
          ...(options.subscriber === undefined ? {} : { subscriber: options.subscriber }),
          ...(options.from === undefined ? {} : { from: options.from }),
          ...(options.to === undefined ? {} : { to: options.to }),
          includeCancelled: options.includeCancelled === true,
          reason: options.reason,
          actor,
          ratePerSecond: options.rate,
          dryRun: options.dryRun === true,
          onProgress: (p) => progress.replay(p),
        });
        progress.end();
        session.print(report, formatBulkReplay);
        return report.failed > 0 ? ExitCode.FAILURE : undefined;
      });
    });

  program
    .command('cancel')
    .description(
      'PENDING or FAILED → CANCELLED: every such delivery of the message, or only --subscriber’s (a copy already ' +
        'in flight may still be applied)',
    )
    .argument('<id>', 'the message id')
    .requiredOption('--reason <text>', 'why: kept in the audit trail and the message history')
    .option('--subscriber <name>', "only this subscriber's delivery")
    .action(function (this: Command, id: string) {
      const { reason, subscriber } = this.opts<{ reason: string; subscriber?: string }>();
      return action(this, async ({ session }) => {
        const admin = await session.admin();
        session.print(
          await admin.cancel({
            messageId: id,
            ...(subscriber === undefined ? {} : { subscriber }),
            reason,
            actor: await session.actor(),
          }),
          formatActionResult,
        );
        return undefined;
      });
    });

  program
    .command('redrive')
    .description(
      "move dead letters back to their source queue (filtered, paced, journalled); a subscriber's dead letters " +
        "from its own stack (--stack <the subscriber's stack>)",
    )
    .option('--topic <topic>', "only this topic's messages, from its queue's DLQ")
    .option('--message-id <ids...>', 'only these outbox message ids')
    .option('--queue <queue>', 'only this DLQ (URL or name, or its source queue’s)')
    .option('--rate <n>', 'messages per second at most', rateOption('--rate'), DEFAULTS.ratePerSecond)
    .option('--max <n>', 'move at most this many', integerOption('--max'))
    .option('--dry-run', 'list what would move, change nothing')
    .option('--reason <text>', 'why, for the audit trail')
    .option('--no-move-task', 'on AWS, never hand an unfiltered redrive to an SQS message move task')
    .action(function (this: Command) {
      const options = this.opts<{
        topic?: string;
        messageId?: string[];
        queue?: string;
        rate: number;
        max?: number;
        dryRun?: boolean;
        reason?: string;
        moveTask: boolean;
      }>();
      return action(this, async ({ session }) => {
        const stack = await session.stack();
        const admin =
          stack.kind === 'subscriber' ? session.subscriberAdmin(stack.subscriber) : await session.admin();
        const input: RedriveInput = {
          ...(options.topic === undefined ? {} : { topic: options.topic }),
          ...(options.messageId === undefined ? {} : { messageIds: options.messageId }),
          ...(options.queue === undefined ? {} : { queue: options.queue }),
          ...(options.max === undefined ? {} : { maxMessages: options.max }),
          ...(options.reason === undefined ? {} : { reason: options.reason }),
          ratePerSecond: options.rate,
          dryRun: options.dryRun === true,
          actor: await session.actor(),
        };
        if (options.moveTask && !session.onEmulator && admin.canUseMoveTask(input)) {
          try {
            const tasks = await admin.startMoveTasks({
              actor: input.actor,
              ...(input.queue === undefined ? {} : { queue: input.queue }),
              ...(input.reason === undefined ? {} : { reason: input.reason }),
              ...(Number.isInteger(input.ratePerSecond) && input.ratePerSecond <= 500
                ? { ratePerSecond: input.ratePerSecond }
                : {}),
            });
            session.print(tasks, formatMoveTasks);
            return undefined;
          } catch (error) {
            if (!(error instanceof MoveTaskUnavailableError)) throw error;
            io.stderr.write('note: no SQS message move task here; moving by receive/send/delete\n');
          }
        }
        const progress = progressReporter(io.stderr);
        const report = await admin.redriveDeadLetters({ ...input, onProgress: (p) => progress.redrive(p) });
        progress.end();
        session.print(report, formatRedrive);
        return undefined;
      });
    });

  program
    .command('erase')
    .description("erase an aggregate's messages and inbox rows (data-protection request), audited")
    .requiredOption('--aggregate-id <id>', 'the aggregate')
    .requiredOption('--reason <text>', 'why: kept in the audit trail (no personal data)')
    .action(function (this: Command) {
      const { aggregateId, reason } = this.opts<{ aggregateId: string; reason: string }>();
      return action(this, async ({ session }) => {
        const admin = await session.admin();
        session.print(await admin.erase({ aggregateId, reason, actor: await session.actor() }), formatErase);
        return undefined;
      });
    });

  program
    .command('skip')
    .description(
      'close a gap in an ordered sequence: cancel message --seq of --order-key (PENDING, FAILED or CANCELLED), ' +
        'move the consumers past it and resend the message after it, which they hold parked; audited',
    )
    .requiredOption('--order-key <key>', 'the sequence, <scope>#<aggregateId> (e.g. order#o-42)')
    .requiredOption('--seq <n>', 'the place of the message to skip in it', integerOption('--seq'))
    .option(
      '--subscriber <name>',
      'a topic delivered to subscribers: the subscriber whose own sequence it is (it is sent an outbox.skip)',
    )
    .requiredOption('--reason <text>', 'why: kept in the audit trail and the message history')
    .action(function (this: Command) {
      const { orderKey, seq, reason, subscriber } = this.opts<{
        orderKey: string;
        seq: number;
        reason: string;
        subscriber?: string;
      }>();
      return action(this, async ({ session }) => {
        const admin = await session.admin();
        session.print(
          await admin.skipOrderGap({
            orderKey,
            seq,
            reason,
            actor: await session.actor(),
            ...(subscriber === undefined ? {} : { subscriber }),
          }),
          formatSkipOrderGap,
        );
        return undefined;
      });
    });

  program
    .command('recover')
    .description(
      'the runbook for a topic: check the downstream (--health), replay its FAILED messages, redrive its ' +
        'DLQ, wait until they are CONFIRMED, print what remains (exit 0 only when nothing does)',
    )
    .requiredOption('--topic <topic>', 'the topic to recover')
    .option(
      '--subscriber <name>',
      'a topic delivered to subscribers: recover only this subscriber (its FAILED deliveries; its dead letters are in its own stack)',
    )
    .option('--health <module>', 'a module exporting checkHealth(topic, context) → {healthy, detail}')
    .option(
      '--rate <n>',
      'replays and moves per second at most',
      rateOption('--rate'),
      DEFAULTS.ratePerSecond,
    )
    .option(
      '--wait <seconds>',
      'how long to wait for CONFIRMED',
      integerOption('--wait'),
      DEFAULTS.waitSeconds,
    )
    .option('--reason <text>', 'why, for the audit trail (default: outbox recover --topic <topic>)')
    .action(function (this: Command) {
      const options = this.opts<{
        topic: string;
        subscriber?: string;
        health?: string;
        rate: number;
        wait: number;
        reason?: string;
      }>();
      return action(this, async ({ session }) => {
        const check =
          options.health === undefined
            ? undefined
            : await loadHealthCheck(options.health, io.cwd ?? process.cwd());
        const admin = await session.admin();
        const outbox = await session.outbox();
        const topics = [
          ...new Set([...Object.keys(outbox.topicQueues), ...Object.keys(outbox.subscriptions)]),
        ];
        if (!topics.includes(options.topic)) {
          throw new InvalidAdminRequestError(
            '--topic',
            `is not a topic of the outbox in ${outbox.stackName} (${topics.join(', ') || 'none'})`,
          );
        }
        const subscribers = Object.keys(outbox.subscriptions[options.topic] ?? {});
        if (options.subscriber !== undefined && !subscribers.includes(options.subscriber)) {
          throw new InvalidAdminRequestError(
            '--subscriber',
            `is not a subscriber of ${options.topic} (${subscribers.join(', ') || 'none'})`,
          );
        }
        const progress = progressReporter(io.stderr);
        const report = await recoverTopic(
          {
            admin,
            ...(check === undefined
              ? {}
              : { health: { check, context: { outbox, clientConfig: session.config } } }),
            clock: io.clients?.clock ?? (() => new Date()),
            sleep: session.sleep,
            onReplayProgress: (p) => progress.replay(p),
            onRedriveProgress: (p) => progress.redrive(p),
            onStep: (line) => {
              progress.end();
              io.stderr.write(`${line}…\n`);
            },
          },
          {
            topic: options.topic,
            ...(options.subscriber === undefined ? {} : { subscriber: options.subscriber }),
            reason: options.reason ?? `outbox recover --topic ${options.topic}`,
            actor: await session.actor(),
            ratePerSecond: options.rate,
            waitSeconds: options.wait,
            ...(io.clients?.recoverPollIntervalMs === undefined
              ? {}
              : { pollIntervalMs: io.clients.recoverPollIntervalMs }),
          },
        );
        progress.end();
        session.print(report, formatRecover);
        return {
          [RecoverOutcome.RESOLVED]: ExitCode.OK,
          [RecoverOutcome.UNRESOLVED]: ExitCode.FAILURE,
          [RecoverOutcome.UNHEALTHY]: ExitCode.UNHEALTHY,
        }[report.outcome];
      });
    });

  program
    .command('call')
    .description(
      "call the stack's REST API signed with SigV4 (execute-api) by the default AWS credential chain; the " +
        'body goes to stdout, the status to stderr; a 4xx or 5xx answer exits non-zero',
    )
    .argument('<method>', 'GET, POST, PUT, DELETE…')
    .argument('<path>', 'the path below the API URL, with any query string: /orders, /inventory/SKU-1')
    .option('--data <body>', 'the request body, sent exactly as given (JSON); @file reads it from a file')
    .option('--url <url>', `the API URL, stage included (default: the stack's ${API_URL_OUTPUT} output)`)
    .option('-H, --header <header...>', 'an extra header, as "name: value"')
    .action(function (this: Command, method: string, path: string) {
      const options = this.opts<{ data?: string; url?: string; header?: string[] }>();
      return action(this, async ({ session }) => {
        if (!/^[A-Za-z]+$/.test(method)) {
          throw new ConfigError(`<method> must be an HTTP method such as GET or POST, got ${method}`);
        }
        const baseUrl = options.url ?? (await session.apiUrl());
        const body =
          options.data?.startsWith('@') === true
            ? await readBody(resolve(io.cwd ?? process.cwd(), options.data.slice(1)))
            : options.data;
        const answer = await callApi(
          {
            baseUrl,
            method,
            path,
            ...(body === undefined ? {} : { body }),
            headers: headersOf(options.header ?? []),
          },
          {
            region: signingRegion(baseUrl, io.env),
            // The local runtime's API checks no signature: a local URL is signed with dummy credentials when the
            // machine has none, so `outbox call` against npm start needs nothing but the URL.
            credentials:
              session.config.credentials ??
              (isLocalApi(baseUrl) ? withLocalFallback(defaultProvider()) : defaultProvider()),
          },
        );
        io.stderr.write(
          `HTTP ${answer.status} ${answer.statusText}${answer.requestId === undefined ? '' : ` (request id ${answer.requestId})`}\n`,
        );
        session.print({ ...answer, body: parsedBody(answer.body) }, () => formatAnswer(answer));
        return exitCodeOfHttpStatus(answer.status);
      });
    });

  program
    .command('console')
    .description(
      'serve the operator console, a web page on 127.0.0.1 only: the pipeline, failures by cause, messages, ' +
        'dead letters and the audit trail, and their repairs through the same operations as these commands; ' +
        'prints one URL that signs your browser in once',
    )
    .option(
      '--port <n>',
      `the port on 127.0.0.1 (0 picks a free one)`,
      portOption('--port'),
      DEFAULT_CONSOLE_PORT,
    )
    .option(
      '--subscriber-stack <name...>',
      "subscribers' own stacks (their queues and dead letters), instead of looking for them",
    )
    .action(function (this: Command) {
      const options = this.opts<{ port: number; subscriberStack?: string[] }>();
      return action(this, async ({ session }) => {
        await runConsoleCommand(
          session,
          {
            port: options.port,
            subscriberStacks: options.subscriberStack ?? [],
            ...(io.clients?.consoleStop === undefined ? {} : { stop: io.clients.consoleStop }),
          },
          io,
        );
        return undefined;
      });
    });

  return program;
}

/** The default credential chain, or dummy credentials when it finds none (for a local API only). */
function withLocalFallback(
  provider: ReturnType<typeof defaultProvider>,
): () => Promise<{ accessKeyId: string; secretAccessKey: string }> {
  return async () => {
    try {
      return await provider();
    } catch {
      return { ...LOCAL_SIGNING_CREDENTIALS };
    }
  };
}

/** The answer's body as received, on its own line (`--json` prints the whole answer instead). */
function formatAnswer(answer: ApiAnswer): string {
  return answer.body.endsWith('\n') ? answer.body.slice(0, -1) : answer.body;
}

/** A JSON body parsed, for `--json`; any other body as its text. */
function parsedBody(body: string): unknown {
  try {
    return JSON.parse(body);
  } catch {
    return body;
  }
}

/** `--header name: value` options as headers. */
function headersOf(headers: readonly string[]): Record<string, string> {
  return Object.fromEntries(
    headers.map((header) => {
      const at = header.indexOf(':');
      const name = header.slice(0, at).trim();
      if (at < 1 || !/^[!#$%&'*+.^_`|~0-9A-Za-z-]+$/.test(name)) {
        throw new ConfigError(`--header must be "name: value", got ${header}`);
      }
      return [name, header.slice(at + 1).trim()];
    }),
  );
}

/** A request body from a file (`--data @file`). */
async function readBody(path: string): Promise<string> {
  try {
    return await readFile(path, 'utf8');
  } catch (cause) {
    throw new ConfigError(`--data: cannot read ${path}: ${describeError(cause)}`, { cause });
  }
}

/** What one run of the CLI holds: its clients, the discovered outbox and the operator, each made when first needed. */
class Session {
  readonly config: AwsClientConfig;
  readonly onEmulator: boolean;
  readonly sleep: (ms: number) => Promise<void>;
  readonly #io: CliIo;
  readonly #destroy: (() => void)[] = [];
  #json = false;
  #stack: string | undefined;
  #command = '';
  #discovered: Promise<DiscoveredStack> | undefined;
  #admin: Promise<OutboxAdmin> | undefined;
  #adminDepsOfOutbox: Promise<AdminDeps> | undefined;
  #actor: Promise<string> | undefined;

  constructor(io: CliIo) {
    this.#io = io;
    const endpoint = io.env.AWS_ENDPOINT_URL;
    this.onEmulator = endpoint !== undefined && endpoint !== '';
    const config = awsClientConfig(io.env);
    this.config = this.onEmulator
      ? {
          ...config,
          region: config.region ?? EMULATOR_DEFAULTS.region,
          credentials: config.credentials ?? { ...EMULATOR_DEFAULTS.credentials },
        }
      : config;
    this.sleep = io.clients?.sleep ?? ((ms) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  }

  globals(command: Command): GlobalOptions & { readonly session: Session } {
    const globals = command.optsWithGlobals<GlobalOptions>();
    this.#json = globals.json === true;
    this.#stack = globals.stack;
    this.#command = command.name();
    return { ...globals, session: this };
  }

  /** Prints `value` as JSON with `--json`, else as `format` renders it. */
  print<T>(value: T, format: (value: T) => string): void {
    this.#io.stdout.write(`${this.#json ? toJson(value) : format(value)}\n`);
  }

  /**
   * What the stack holds: `--stack`, or against an emulator the `*-local` stack holding an outbox (see
   * `chooseStackName`).
   */
  stack(): Promise<DiscoveredStack> {
    this.#discovered ??= (async () => {
      const cloudFormation = this.#cloudFormation();
      const stackName = await chooseStackName(cloudFormation, {
        ...(this.#stack === undefined ? {} : { stack: this.#stack }),
        ...(this.onEmulator
          ? {
              endpoint: this.#io.env.AWS_ENDPOINT_URL,
              labelOf: async (name: string) => labelOf(await readStackKind(cloudFormation, name)),
            }
          : {}),
      });
      const stack = await discoverStack(
        cloudFormation,
        stackName,
        this.onEmulator ? this.#io.env.AWS_ENDPOINT_URL : undefined,
      );
      const notes = stack.kind === 'outbox' ? stack.outbox.notes : stack.subscriber.notes;
      for (const note of notes) this.#io.stderr.write(`note: ${note}\n`);
      return stack;
    })();
    return this.#discovered;
  }

  /**
   * The outbox of the stack; a {@link StackDiscoveryError} naming the producer's stack when it is a subscriber's,
   * which holds no outbox.
   */
  async outbox(): Promise<DiscoveredOutbox> {
    const stack = await this.stack();
    if (stack.kind === 'outbox') return stack.outbox;
    throw await this.#wrongStack(stack.subscriber);
  }

  /**
   * The REST API's URL from the stack's `apiUrl` output. Against an emulator the API is the local runtime's,
   * which the stack does not know: `--url` is required there.
   */
  async apiUrl(): Promise<string> {
    if (this.onEmulator) {
      throw new ConfigError(
        '--url is required with AWS_ENDPOINT_URL: the local API is served by npm start, not by the emulator; ' +
          'give the URL it prints as REST API (npm run outbox -- call GET /inventory/SKU-APPLE --url http://127.0.0.1:3000)',
      );
    }
    const cloudFormation = this.#cloudFormation();
    const stackName = await chooseStackName(cloudFormation, {
      ...(this.#stack === undefined ? {} : { stack: this.#stack }),
    });
    const outputs = await readStackOutputs(cloudFormation, stackName);
    const named = Object.entries(outputs).filter(([name]) => name.endsWith(API_URL_SUFFIX));
    const url = outputs[API_URL_OUTPUT] ?? (named.length === 1 ? named[0]?.[1] : undefined);
    if (url === undefined) {
      throw new StackDiscoveryError(
        stackName,
        named.length > 1
          ? `has several API URL outputs (${named.map(([name]) => name).join(', ')}): give the API URL with --url`
          : `has no ${API_URL_OUTPUT} (or <service>${API_URL_SUFFIX}) output: give the API URL with --url`,
      );
    }
    return url;
  }

  admin(): Promise<OutboxAdmin> {
    this.#admin ??= (async () => new OutboxAdmin(await this.adminDeps()))();
    return this.#admin;
  }

  /** The operations core's dependencies on the stack's outbox, which `admin()` (and the console) works on. */
  adminDeps(): Promise<AdminDeps> {
    this.#adminDepsOfOutbox ??= (async () => {
      const outbox = await this.outbox();
      const deps = this.#io.clients?.adminDeps?.(outbox, this.config) ?? this.#adminDeps(outbox);
      // A DLQ that fits no route fails now, not in the middle of a redrive.
      deadLetterRoutes(deps);
      return deps;
    })();
    return this.#adminDepsOfOutbox;
  }

  /** The operations on a subscriber's own stack. */
  subscriberAdmin(subscriber: DiscoveredSubscriber): SubscriberAdmin {
    return new SubscriberAdmin(this.subscriberDeps(subscriber));
  }

  /** The dependencies of the operations on a subscriber's own stack. */
  subscriberDeps(subscriber: DiscoveredSubscriber): SubscriberAdminDeps {
    return this.#io.clients?.subscriberDeps?.(subscriber, this.config) ?? this.#subscriberDeps(subscriber);
  }

  /** The emulator's endpoint (`AWS_ENDPOINT_URL`); `undefined` on AWS. */
  get endpoint(): string | undefined {
    return this.onEmulator ? this.#io.env.AWS_ENDPOINT_URL : undefined;
  }

  /** A Document client of the session's (the console reads the audit tables with it). */
  documentClient(): DynamoDBDocumentClient {
    return this.#own(createDocumentClient(this.config));
  }

  /** Where claim-checked payloads are read from (S3). */
  claimCheckStore(): ClaimCheckStore {
    return new S3ClaimCheckStore(this.#own(createS3Client(this.config)));
  }

  /** The session's CloudFormation client. */
  cloudFormation(): CloudFormationClient {
    return this.#cloudFormation();
  }

  actor(): Promise<string> {
    this.#actor ??= operatorIdentity({
      env: this.#io.env,
      ...(this.#io.clients?.callerIdentity === undefined
        ? {}
        : { callerIdentity: this.#io.clients.callerIdentity }),
    });
    return this.#actor;
  }

  close(): void {
    for (const destroy of this.#destroy.splice(0)) destroy();
  }

  #adminDeps(outbox: DiscoveredOutbox): AdminDeps {
    const client = this.#own(createDocumentClient(this.config));
    const sqs = this.#own(createSqsClient(this.config));
    return dynamoAdminDeps({
      client,
      queues: new SqsAdminQueues(sqs),
      outboxTable: outbox.outboxTable,
      auditTable: outbox.auditTable,
      topicQueues: outbox.topicQueues,
      deadLetterQueues: outbox.deadLetterQueues,
      deliveryInboxes: outbox.deliveryInboxes,
      orderedTopics: outbox.orderedTopics,
      subscriptions: outbox.subscriptions,
      dueShards: outbox.dueShards,
      retentionDays: outbox.retentionDays,
      clock: this.#io.clients?.clock ?? (() => new Date()),
      newId: monotonicFactory(),
      sleep: this.sleep,
    });
  }

  #subscriberDeps(subscriber: DiscoveredSubscriber): SubscriberAdminDeps {
    const sqs = this.#own(createSqsClient(this.config));
    return {
      subscriber: subscriber.subscriber,
      queues: new SqsAdminQueues(sqs),
      topicQueues: subscriber.topicQueues,
      deadLetterQueues: subscriber.deadLetterQueues,
      inboxTables: subscriber.inboxTables,
      ...(subscriber.auditTable === undefined
        ? {}
        : {
            audit: new DynamoAuditLog({
              client: this.#own(createDocumentClient(this.config)),
              auditTable: subscriber.auditTable,
            }),
          }),
      clock: this.#io.clients?.clock ?? (() => new Date()),
      newId: monotonicFactory(),
      sleep: this.sleep,
    };
  }

  /**
   * The refusal of a command that needs an outbox on a subscriber's own stack, naming the producer's stack: on an
   * emulator, the local stack holding the outbox the subscriber's queue names (or the only one holding an outbox).
   */
  async #wrongStack(subscriber: DiscoveredSubscriber): Promise<StackDiscoveryError> {
    const producer = this.onEmulator ? await this.#producerStackOf(subscriber) : undefined;
    const outboxes = subscriber.outboxes.join(', ');
    const where =
      producer !== undefined
        ? `--stack ${producer}`
        : `--stack <the producer's stack${outboxes === '' ? '' : `, the one holding outbox ${outboxes}`}>`;
    return new StackDiscoveryError(
      subscriber.stackName,
      `is subscriber ${subscriber.subscriber}'s own stack (its queue, dead-letter queue and inbox), which holds no ` +
        `outbox: outbox ${this.#command} works on the producer's stack, which holds the outbox and its audit ` +
        `trail: ${where}. Here: outbox stats, outbox redrive`,
    );
  }

  /** The emulator's local stack holding the outbox `subscriber` receives from, or the only one holding an outbox. */
  async #producerStackOf(subscriber: DiscoveredSubscriber): Promise<string | undefined> {
    const cloudFormation = this.#cloudFormation();
    const names = await localStackNames(cloudFormation, this.#io.env.AWS_ENDPOINT_URL ?? '').catch(
      (): string[] => [],
    );
    const kinds = await Promise.all(names.map((name) => readStackKind(cloudFormation, name)));
    const producers = names.flatMap((name, n) => {
      const kind = kinds[n];
      return kind?.kind === 'outbox' ? [{ name, outboxName: kind.outboxName }] : [];
    });
    const named = producers.find(
      (producer) => producer.outboxName !== undefined && subscriber.outboxes.includes(producer.outboxName),
    );
    return named?.name ?? (producers.length === 1 ? producers[0]?.name : undefined);
  }

  #cloudFormation(): CloudFormationClient {
    return this.#io.clients?.cloudFormation ?? this.#own(new CloudFormationClient({ ...this.config }));
  }

  #own<T extends { destroy(): void }>(client: T): T {
    this.#destroy.push(() => client.destroy());
    return client;
  }
}

/** How a list of stacks names what a stack holds. */
function labelOf(kind: StackKind): StackLabel {
  if (kind.kind === 'outbox') return { holdsOutbox: true, label: 'outbox' };
  if (kind.kind === 'subscriber') return { holdsOutbox: false, label: `subscriber ${kind.subscriber}` };
  return { holdsOutbox: false, label: 'no outbox' };
}

/** A positive whole number option. */
function integerOption(flag: string): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^\d+$/.test(value.trim()) || !Number.isSafeInteger(number) || number < 1) {
      throw new InvalidArgumentError(`${flag} must be a whole number above 0, got ${value}`);
    }
    return number;
  };
}

/** A port option: 0 (a free one) to 65535. */
function portOption(flag: string): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (!/^\d+$/.test(value.trim()) || number > 65_535) {
      throw new InvalidArgumentError(`${flag} must be a port number from 0 to 65535, got ${value}`);
    }
    return number;
  };
}

/** A rate option: a number above 0. */
function rateOption(flag: string): (value: string) => number {
  return (value) => {
    const number = Number(value);
    if (value.trim() === '' || !Number.isFinite(number) || number <= 0) {
      throw new InvalidArgumentError(
        `${flag} must be a number of operations per second above 0, got ${value}`,
      );
    }
    return number;
  };
}

/** JSON of a result; big integers (exact DynamoDB numbers) as text, sets as arrays. */
export function toJson(value: unknown): string {
  return JSON.stringify(
    value,
    (_key, item: unknown) =>
      typeof item === 'bigint' ? item.toString() : item instanceof Set ? [...item] : item,
    2,
  );
}

/** The `--json` document of an error: its class, its code (an outbox error's), its message and the exit code. */
function errorDocument(error: unknown, exitCode: ExitCode): Record<string, unknown> {
  return {
    error: {
      name: error instanceof Error ? error.name : 'Error',
      ...(error instanceof OutboxError ? { code: error.code } : {}),
      message: error instanceof Error ? error.message : String(error),
      exitCode,
    },
  };
}

function kebab(name: string): string {
  return name.replace(/[A-Z]/g, (letter) => `-${letter.toLowerCase()}`);
}
