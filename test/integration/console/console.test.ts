/**
 * The operator console in a real browser (Debian's headless Chromium, driven by playwright-core) against the three
 * services on the local runtime: a FAILED delivery and a dead letter are seeded, found from the overview, repaired
 * with a reason (the delivery seen reaching CONFIRMED, the audit row read), and the sign-in, cookie and CSRF rules
 * refuse what they should. Every view is photographed; `OUTBOX_CONSOLE_SCREENSHOTS=<folder>` keeps the pictures
 * (the README's come from such a run).
 */
import { existsSync, mkdirSync, mkdtempSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { SendMessageCommand, SQSClient } from '@aws-sdk/client-sqs';
import { DynamoDBDocumentClient, paginateScan } from '@aws-sdk/lib-dynamodb';
import type { DynamoDBStreamEvent } from 'aws-lambda';
import { type BrowserContext, chromium, type Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type LocalRuntime, startLocalRuntime } from '../../../infra/dev/local/host/runtime.ts';
import { seedStock } from '../../../infra/stacks/local-plugin.ts';
import { synthExampleTemplates } from '../../../infra/synth-template.ts';
import { runCli } from '../../../shared/cli/run-cli.ts';
import { relayDeps } from '../../../shared/lambda/relay-handler.ts';
import { relayStreamBatch } from '../../../shared/lambda/relay-stream-batch.ts';
import { sweeperDeps } from '../../../shared/lambda/sweeper-handler.ts';
import type { Envelope } from '../../../shared/message/envelope.ts';
import type { OutboxItem } from '../../../shared/outbox/outbox-item.ts';
import type { MessagePublisher } from '../../../shared/relay/message-publisher.ts';
import { toEnvelope } from '../../../shared/relay/relay-messages.ts';
import { DEFAULT_RETRY_POLICY } from '../../../shared/retry/retry-policy.ts';
import { sweep } from '../../../shared/sweeper/sweep.ts';
import { runtimeBackend } from '../support/backend.ts';
import { waitFor } from '../support.ts';

/** Debian's Chromium (`apt-get install chromium`; `.ci/run` installs it where it is missing). */
const CHROMIUM = '/usr/bin/chromium';
const CHROMIUM_FLAGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
  '--no-first-run',
];
const describeInBrowser = existsSync(CHROMIUM)
  ? describe
  : (title: string, body: () => void) =>
      describe.skip(
        `${title} [skipped: no Chromium at ${CHROMIUM}; install it with apt-get install chromium, as .ci/run does]`,
        body,
      );

/** Orders whose delivery to loyalty the relay's sends are refused for while they are in here. */
const refused = new Set<string>();
const FAILED_ORDER = 'order-console-failed';
/** Two more orders refused for the same reason: one failure group of three. */
const MORE_FAILED = ['order-console-failed-2', 'order-console-failed-3'];
const DEAD_LETTER_ORDER = 'order-console-dlq';
const LATER_ORDER = 'order-console-later';
const REASON = 'loyalty queue fixed (INC-21)';

/** The relay's publisher, refusing loyalty's deliveries of the orders in `refused`. */
function refusingPublisher(publisher: MessagePublisher): MessagePublisher {
  return {
    publishBatch: async (queueUrl, messages, options) => {
      const toLoyalty = queueUrl.endsWith('-loyalty');
      const refusedNow = messages.filter((message) => toLoyalty && refused.has(message.aggregateId));
      const result = await publisher.publishBatch(
        queueUrl,
        messages.filter((message) => !refusedNow.includes(message)),
        options,
      );
      return {
        sent: result.sent,
        failed: [
          ...result.failed,
          ...refusedNow.map((m) => ({
            messageId: m.messageId,
            error: `InternalError: loyalty queue refused ${m.messageId}`,
          })),
        ],
      };
    },
  };
}

const quiet = { info: () => {}, warn: () => {} };
let runtime: LocalRuntime;
let consoleUrl: string;
let consoleExit: Promise<number>;
const stopConsole = new AbortController();
let context: BrowserContext;
let profile: string;
let shots: string;
/** Every URL the browser asked for: nothing may leave the console's own origin. */
const requested: string[] = [];

beforeAll(async () => {
  runtime = await startLocalRuntime({
    backend: runtimeBackend(),
    port: 0,
    log: () => {},
    pollIntervalMs: 100,
    templates: synthExampleTemplates({ emulator: true }),
    handlers: {
      // The test sweeps when it wants a replayed delivery sent.
      'OutboxOrders/Outbox/Sweeper': () => async () => ({}),
      // One attempt per delivery: a refused send makes it FAILED at once.
      'OutboxOrders/Outbox/Relay': (_base, env) => {
        const deps = relayDeps({
          ...env,
          SUBSCRIBER_RETRY_POLICIES: JSON.stringify({ loyalty: { ...DEFAULT_RETRY_POLICY, maxAttempts: 1 } }),
        });
        const relay = { ...deps, publisher: refusingPublisher(deps.publisher) };
        return (event) => relayStreamBatch(event as DynamoDBStreamEvent, relay, quiet);
      },
    },
  });
  await seedStock(runtime.apiUrl);
  if (!existsSync(CHROMIUM)) return;

  let stdout = '';
  const { credentials, region } = runtime.clientConfig;
  consoleExit = runCli(['console', '--port', '0'], {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: () => true },
    env: {
      AWS_ENDPOINT_URL: runtime.endpoint,
      AWS_REGION: region,
      AWS_ACCESS_KEY_ID: credentials.accessKeyId,
      AWS_SECRET_ACCESS_KEY: credentials.secretAccessKey,
    },
    clients: { consoleStop: stopConsole.signal },
  });
  consoleUrl = await waitFor(
    async () => (stdout.endsWith('\n') ? stdout.trim() : undefined),
    60_000,
    'the console URL',
  );

  profile = mkdtempSync(join(tmpdir(), 'console-chromium-'));
  shots = process.env.OUTBOX_CONSOLE_SCREENSHOTS
    ? resolve(process.env.OUTBOX_CONSOLE_SCREENSHOTS)
    : mkdtempSync(join(tmpdir(), 'console-shots-'));
  mkdirSync(shots, { recursive: true });
  context = await chromium.launchPersistentContext(profile, {
    executablePath: CHROMIUM,
    headless: true,
    args: CHROMIUM_FLAGS,
    viewport: { width: 1280, height: 800 },
  });
  context.on('request', (request) => requested.push(request.url()));
}, 180_000);

afterAll(async () => {
  await context?.close();
  stopConsole.abort();
  if (consoleExit !== undefined) expect(await consoleExit).toBe(0);
  await runtime?.stop();
  if (profile !== undefined) rmSync(profile, { recursive: true, force: true });
});

/** Places an order through the orders API. */
async function placeOrder(orderId: string): Promise<void> {
  const response = await fetch(`${runtime.apiUrl}/orders`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ orderId, customerId: 'c-console', items: [{ sku: 'SKU-APPLE', quantity: 1 }] }),
  });
  expect(response.status).toBe(201);
}

/** Each delivery of the order's first message: subscriber → status, as GET /orders/{id} shows them. */
async function deliveriesOf(orderId: string): Promise<Record<string, string>> {
  const response = await fetch(`${runtime.apiUrl}/orders/${orderId}`);
  const body = (await response.json()) as {
    messages?: { messageId: string; deliveries?: { subscriber: string; status: string }[] }[];
  };
  return Object.fromEntries((body.messages?.[0]?.deliveries ?? []).map((d) => [d.subscriber, d.status]));
}

/** The order's first message, as the relay put it on loyalty's queue (read from its delivery row). */
async function envelopeOf(orderId: string): Promise<Envelope> {
  const client = DynamoDBDocumentClient.from(new DynamoDBClient(runtime.clientConfig));
  const rows: Record<string, unknown>[] = [];
  for await (const page of paginateScan(
    { client },
    { TableName: runtime.outputs.outboxTableName, ConsistentRead: true },
  )) {
    rows.push(...(page.Items ?? []));
  }
  client.destroy();
  const row = rows.find((item) => item.aggregateId === orderId && item.subscriber === 'loyalty');
  if (row === undefined) throw new Error(`no delivery to loyalty for ${orderId}`);
  return toEnvelope(row as unknown as OutboxItem);
}

/** One sweeper round now, as the scheduled sweeper would run it. */
async function sweepOnce(): Promise<void> {
  let rounds = 1;
  const deps = sweeperDeps(runtime.env['OutboxOrders/Outbox/Sweeper'] ?? {});
  await sweep({
    ...deps,
    owner: `console-test-${Date.now()}`,
    remainingMs: () => (rounds-- > 0 ? Number.MAX_SAFE_INTEGER : 0),
    sleep: async () => {},
    settings: { ...deps.settings, stopBeforeMs: 0 },
  });
}

/** The overview's relay stage. */
function relayStage(page: Page) {
  return page.getByRole('listitem').filter({ has: page.getByRole('heading', { name: 'Relay and sweeper' }) });
}

/** A screenshot of the page, whole, kept in the screenshots folder. */
async function shoot(page: Page, name: string): Promise<void> {
  const path = join(shots, `${name}.png`);
  await page.screenshot({ path, fullPage: true });
  expect(statSync(path).size).toBeGreaterThan(1_000);
}

describeInBrowser('the operator console in Chromium, on the three services', () => {
  let page: Page;
  let failedMessageId: string;

  it('seeds a FAILED delivery to loyalty and a dead letter in loyalty’s queue', async () => {
    for (const orderId of [FAILED_ORDER, ...MORE_FAILED]) {
      refused.add(orderId);
      await placeOrder(orderId);
      await expect
        .poll(() => deliveriesOf(orderId), { timeout: 30_000 })
        .toEqual({ inventory: 'CONFIRMED', loyalty: 'FAILED' });
      refused.delete(orderId);
    }
    failedMessageId = (await envelopeOf(FAILED_ORDER)).messageId;

    await placeOrder(DEAD_LETTER_ORDER);
    await expect
      .poll(() => deliveriesOf(DEAD_LETTER_ORDER), { timeout: 30_000 })
      .toEqual({
        inventory: 'CONFIRMED',
        loyalty: 'CONFIRMED',
      });
    // Loyalty's consumer dead-letters a message as this: the body as received, the reason in its attributes.
    const envelope = await envelopeOf(DEAD_LETTER_ORDER);
    const sqs = new SQSClient(runtime.clientConfig);
    await sqs.send(
      new SendMessageCommand({
        QueueUrl: runtime.outputs.loyaltyDeadLetterQueueUrl,
        MessageBody: JSON.stringify(envelope),
        MessageAttributes: {
          message_id: { DataType: 'String', StringValue: envelope.messageId },
          topic: { DataType: 'String', StringValue: envelope.topic },
          dead_letter_reason: { DataType: 'String', StringValue: 'MAX_RECEIVES' },
          last_error: { DataType: 'String', StringValue: 'Error: points table throttled' },
          receive_count: { DataType: 'Number', StringValue: '5' },
        },
      }),
    );
    sqs.destroy();
  });

  it('signs in with the printed URL and shows the overview: the FAILED delivery and the dead letter', async () => {
    page = await context.newPage();
    await page.goto(consoleUrl);

    expect(new URL(page.url()).pathname).toBe('/');
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
    await relayStage(page).getByRole('link', { name: '3 FAILED' }).waitFor();
    await page.getByRole('link', { name: '1 dead letter' }).waitFor();
    await page.getByText('loyalty: 0 waiting').waitFor();
    await shoot(page, 'overview');
  });

  it('finds the failure group from the overview and replays it with a reason, watching its progress to the report', async () => {
    await relayStage(page).getByRole('link', { name: '3 FAILED' }).click();
    await page.getByRole('heading', { name: 'Failures', level: 1 }).waitFor();
    const group = page.locator('li.group').filter({ hasText: 'loyalty queue refused <id>' });
    await group.getByText('InternalError', { exact: true }).waitFor();
    await shoot(page, 'failures');

    await group.getByRole('button', { name: 'Replay 3 deliveries…' }).click();
    const dialog = page.getByRole('dialog', { name: 'Replay 3 FAILED deliveries' });
    await dialog.getByLabel('Replays per second').fill('5');
    await dialog.getByLabel('Reason (kept in the audit trail)').fill(REASON);
    await shoot(page, 'failure-group-replay-dialog');
    await dialog.getByRole('button', { name: 'Replay' }).click();
    await page.getByText(/Done at .* Replayed 3 deliveries, skipped 0, failed 0/).waitFor();
    await page.getByText('No FAILED delivery.').waitFor();
    await shoot(page, 'failure-group-replayed');
  });

  it('shows the delivery reach CONFIRMED once the sweeper has sent it', async () => {
    await page
      .getByRole('region', { name: /^Replays/ })
      .getByRole('link', { name: failedMessageId })
      .click();
    await page.getByRole('heading', { name: `Message ${failedMessageId}` }).waitFor();
    const loyalty = page.locator('tr[data-subscriber="loyalty"]');
    await loyalty.getByText('PENDING').waitFor();

    await sweepOnce();

    await loyalty.getByText('CONFIRMED').waitFor({ timeout: 30_000 });
    await page.locator('tr[data-subscriber="inventory"]').getByText('CONFIRMED').waitFor();
    await page.getByRole('region', { name: 'Audit trail of the message' }).getByText(REASON).waitFor();
    await shoot(page, 'message');
  });

  it('lists the replay in the audit view: who, what, when, why', async () => {
    await page.getByRole('navigation', { name: 'Views' }).getByRole('link', { name: 'Audit' }).click();
    const row = page.getByRole('row').filter({ hasText: `message:${failedMessageId}` });
    await row.getByText('BULK_REPLAY').waitFor();
    expect(await row.textContent()).toMatch(/local:/);
    expect(await row.textContent()).toContain(REASON);
    await shoot(page, 'audit');
  });

  it('peeks at the dead letter with its reason and redrives it back to loyalty’s queue', async () => {
    await page.getByRole('link', { name: 'Dead letters' }).click();
    await page.getByRole('heading', { name: 'Subscriber loyalty' }).waitFor();
    const queue = page.locator('.queue').filter({ hasText: '1 messages' });
    await queue.getByRole('button', { name: /^Peek at / }).click();
    await queue.getByRole('cell', { name: 'MAX_RECEIVES' }).waitFor();
    await queue.getByRole('cell', { name: 'Error: points table throttled' }).waitFor();
    await queue.getByRole('cell', { name: '5', exact: true }).waitFor();
    await shoot(page, 'dead-letters');

    await queue.getByRole('button', { name: /^Redrive / }).click();
    const dialog = page.getByRole('dialog');
    await dialog.getByLabel('Reason (kept in the audit trail)').fill('points table back (INC-22)');
    await dialog.getByRole('button', { name: 'Redrive' }).click();
    await page.getByText(/Done at .* Moved 1 message back to the queue/).waitFor();
    await page.locator('.queue').filter({ hasText: '0 messages' }).first().waitFor({ timeout: 15_000 });
  });

  it('shows the messages and the aggregate, and its search box goes to the page of an id', async () => {
    refused.add(LATER_ORDER);
    await placeOrder(LATER_ORDER);
    await expect
      .poll(() => deliveriesOf(LATER_ORDER), { timeout: 30_000 })
      .toEqual({
        inventory: 'CONFIRMED',
        loyalty: 'FAILED',
      });
    await page.getByRole('link', { name: 'Messages' }).click();
    await page.getByRole('cell', { name: LATER_ORDER }).waitFor();
    await page.getByLabel('Subscriber').fill('loyalty');
    await page.getByLabel('Topic').fill('order.created');
    await page.getByRole('button', { name: 'Show' }).click();
    await page.getByRole('cell', { name: 'loyalty', exact: true }).waitFor();
    expect(new URL(page.url()).search).toBe('?status=FAILED&topic=order.created&subscriber=loyalty');
    await shoot(page, 'messages');

    await page.getByLabel('Message id, aggregate id or order key').fill(FAILED_ORDER);
    await page.getByRole('button', { name: 'Find' }).click();
    await page.getByRole('heading', { name: `Aggregate ${FAILED_ORDER}` }).waitFor();
    await page.getByRole('link', { name: failedMessageId }).waitFor();
    await shoot(page, 'aggregate');

    await page.getByLabel('Message id, aggregate id or order key').fill(failedMessageId);
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: `Message ${failedMessageId}` }).waitFor();
  });

  it('is read at a phone’s width', async () => {
    const phone = await context.newPage();
    await phone.setViewportSize({ width: 390, height: 844 });
    await phone.goto(new URL('/', consoleUrl).href);
    await phone.getByRole('heading', { name: 'Relay and sweeper' }).waitFor();
    const overflow = await phone.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await shoot(phone, 'overview-phone');
    await phone.close();
  });

  it('is worked with the keyboard alone: the skip link, the views, the search box', async () => {
    await page.goto(new URL('/failures', consoleUrl).href);
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Skip to the content');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Overview');
    await page.keyboard.press('Enter');
    await page.getByRole('heading', { name: 'Overview', level: 1 }).waitFor();
  });

  it('loaded nothing from anywhere but the console itself', () => {
    const origin = new URL(consoleUrl).origin;
    expect(requested.length).toBeGreaterThan(10);
    expect(requested.filter((url) => !url.startsWith(`${origin}/`))).toEqual([]);
  });

  it('refuses a browser without the session: the page and the API are 401, the used sign-in URL too', async () => {
    const stranger = await chromium.launch({
      executablePath: CHROMIUM,
      headless: true,
      args: CHROMIUM_FLAGS,
    });
    const other = await stranger.newPage();
    const origin = new URL(consoleUrl).origin;
    expect((await other.goto(`${origin}/failures`))?.status()).toBe(401);
    await other.getByRole('heading', { name: 'Not signed in' }).waitFor();
    expect((await other.goto(`${origin}/api/overview`))?.status()).toBe(401);
    expect((await other.goto(consoleUrl))?.status()).toBe(401);
    await other.getByText('used already').waitFor();
    await stranger.close();
  });

  it('refuses an action without the CSRF token, and one sent from another page of 127.0.0.1', async () => {
    const origin = new URL(consoleUrl).origin;
    await page.goto(`${origin}/`);
    const withoutToken = await page.evaluate(
      async (path) =>
        (
          await fetch(path, {
            method: 'POST',
            headers: { 'content-type': 'application/json' },
            body: '{"reason":"x"}',
          })
        ).status,
      `/api/messages/${failedMessageId}/cancel`,
    );
    expect(withoutToken).toBe(403);

    // The local API's page is another origin of the same site: a form it posts carries the SameSite=Strict cookie.
    const attacker = await context.newPage();
    await attacker.goto(`${runtime.apiUrl}/inventory/SKU-APPLE`);
    const answered = attacker.waitForResponse((response) => response.url().startsWith(origin));
    await attacker.evaluate(`(() => {
      const form = document.createElement('form');
      form.method = 'POST';
      form.enctype = 'text/plain';
      form.action = ${JSON.stringify(`${origin}/api/messages/${failedMessageId}/cancel`)};
      document.body.append(form);
      form.submit();
    })()`);
    const response = await answered;
    expect(response.status()).toBe(403);
    expect(await response.request().headerValue('cookie')).toMatch(/outbox_console_/);
    await attacker.close();
    expect(await deliveriesOf(FAILED_ORDER)).toEqual({ inventory: 'CONFIRMED', loyalty: 'CONFIRMED' });
  });

  it('opens a view from a link on another site (a chat): asked again from its own page, it is shown', async () => {
    const chat = await context.newPage();
    await chat.setContent(`<a href="${new URL('/dead-letters', consoleUrl).href}">the dead letters</a>`);
    await chat.getByRole('link', { name: 'the dead letters' }).click();
    await chat.getByRole('heading', { name: 'Dead letters', level: 1 }).waitFor();
    expect(new URL(chat.url()).pathname).toBe('/dead-letters');
    await chat.close();
  });
});
