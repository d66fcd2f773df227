/**
 * `outbox console`: the outbox found as every other command finds it (its stack, or on an emulator the local stack
 * holding it), the subscribers' stacks found from it, and the console served on 127.0.0.1 until the operator stops
 * it (Ctrl-C). It prints one URL, which signs the browser in once.
 */
import type { CloudFormationClient } from '@aws-sdk/client-cloudformation';
import type { DynamoDBDocumentClient } from '@aws-sdk/lib-dynamodb';
import type { AdminDeps } from '../../admin/admin-deps.ts';
import type { SubscriberAdminDeps } from '../../admin/subscriber-admin.ts';
import { scanAuditRows } from '../../aws/audit-table.ts';
import type { ClaimCheckStore } from '../../claim-check/claim-check-store.ts';
import type { DiscoveredOutbox, DiscoveredSubscriber } from '../stack-discovery.ts';
import { loadConsoleAssets } from './console-assets.ts';
import type { AuditSource, ConsoleContext, SubscriberReach } from './console-context.ts';
import { startConsoleServer } from './console-server.ts';
import { findSubscriberStacks } from './subscriber-stacks.ts';

/** What the console takes from the CLI's session: the outbox it found, the clients and the operator. */
export interface ConsoleHost {
  /** The emulator's endpoint (`AWS_ENDPOINT_URL`); absent on AWS. */
  readonly endpoint: string | undefined;
  outbox(): Promise<DiscoveredOutbox>;
  /** The admin core's dependencies on the outbox: the same the CLI's commands build `OutboxAdmin` on. */
  adminDeps(): Promise<AdminDeps>;
  subscriberDeps(subscriber: DiscoveredSubscriber): SubscriberAdminDeps;
  cloudFormation(): CloudFormationClient;
  documentClient(): DynamoDBDocumentClient;
  claimCheckStore(): ClaimCheckStore;
  actor(): Promise<string>;
}

/** What `outbox console` was asked for. */
export interface ConsoleCommandOptions {
  readonly port: number;
  /** Subscribers' stacks to use instead of looking for them. */
  readonly subscriberStacks: readonly string[];
  /** Stops the console; without it, SIGINT or SIGTERM does. */
  readonly stop?: AbortSignal;
}

/** Where the command writes: the URL on stdout, notes on stderr. */
export interface ConsoleCommandIo {
  readonly stdout: { write(text: string): unknown };
  readonly stderr: { write(text: string): unknown };
}

/** The default port: links to a console's pages stay the same from one start to the next. */
export const DEFAULT_CONSOLE_PORT = 4100;

/**
 * Finds the outbox and its subscribers' stacks, serves the console and resolves once it has been stopped.
 * @example
 * await runConsoleCommand(session, { port: 4100, subscriberStacks: [] }, { stdout: process.stdout, stderr: process.stderr });
 */
export async function runConsoleCommand(
  host: ConsoleHost,
  options: ConsoleCommandOptions,
  io: ConsoleCommandIo,
): Promise<void> {
  const outbox = await host.outbox();
  const deps = await host.adminDeps();
  const subscribers = await findSubscriberStacks({
    cloudFormation: host.cloudFormation(),
    outbox,
    given: options.subscriberStacks,
    ...(host.endpoint === undefined ? {} : { endpoint: host.endpoint }),
  });
  const reaches: SubscriberReach[] = [
    ...subscribers.found.map((found) => ({
      subscriber: found.subscriber,
      stackName: found.stackName,
      deps: host.subscriberDeps(found),
    })),
    ...subscribers.missing.map((missing) => ({
      subscriber: missing.subscriber ?? missing.stackName ?? '?',
      ...(missing.stackName === undefined ? {} : { stackName: missing.stackName }),
      problem: missing.problem,
    })),
  ];
  const client = host.documentClient();
  const auditOf = (stackName: string, table: string): AuditSource => ({
    stackName,
    scan: (page) => scanAuditRows(client, table, page),
  });
  const context: ConsoleContext = {
    stackName: outbox.stackName,
    ...(outbox.outboxName === undefined ? {} : { outboxName: outbox.outboxName }),
    deps,
    orderedTopics: outbox.orderedTopics,
    subscriptions: outbox.subscriptions,
    subscribers: reaches,
    audit: [
      auditOf(outbox.stackName, outbox.auditTable),
      ...subscribers.found.flatMap((found) =>
        found.auditTable === undefined ? [] : [auditOf(found.stackName, found.auditTable)],
      ),
    ],
    claimChecks: host.claimCheckStore(),
    actor: () => host.actor(),
    notes: [...outbox.notes, ...subscribers.notes],
  };
  const running = await startConsoleServer({
    context,
    assets: await loadConsoleAssets(),
    port: options.port,
  });
  for (const found of subscribers.found) {
    io.stderr.write(`subscriber ${found.subscriber}: stack ${found.stackName}\n`);
  }
  for (const missing of subscribers.missing) {
    io.stderr.write(
      `subscriber ${missing.subscriber ?? missing.stackName ?? '?'}: not reached: ${missing.problem}\n`,
    );
  }
  io.stderr.write(
    `outbox console for ${outbox.stackName} on ${running.origin} (127.0.0.1 only). Open the URL below in your ` +
      'browser: it signs you in once. Ctrl-C stops the console.\n',
  );
  io.stdout.write(`${running.url}\n`);
  await stopped(options.stop);
  io.stderr.write('stopping the console: running jobs finish the step they are on\n');
  await running.close();
}

/** Resolves when `signal` aborts, or without one on SIGINT or SIGTERM. */
function stopped(signal: AbortSignal | undefined): Promise<void> {
  return new Promise((resolve) => {
    if (signal !== undefined) {
      if (signal.aborted) resolve();
      else signal.addEventListener('abort', () => resolve(), { once: true });
      return;
    }
    const stop = () => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
}
