import { ListStacksCommand } from '@aws-sdk/client-cloudformation';
import { afterEach, beforeAll, describe, expect, it } from 'vitest';
import { discoverOutbox, outboxOfStack, StackDiscoveryError } from '../../../shared/cli/stack-discovery.ts';
import { chooseStackName } from '../../../shared/cli/stack-name.ts';
import { ConfigError } from '../../../shared/errors.ts';
import { OUTBOX_ROLE_METADATA } from '../../../shared/observability/resource-roles.ts';
import { cloudFormationWith, exampleTemplate, STACK, summariesOf } from './cli-fixture.ts';

type Template = { Resources: Record<string, { Type: string; Metadata?: Record<string, unknown> }> };

/** The logical id of the example's resource with this role (looked up, never hard-coded: ids are hashed). */
function logicalIdOf(template: Template, role: string): string {
  const found = Object.entries(template.Resources).find(
    ([, resource]) => resource.Metadata?.[OUTBOX_ROLE_METADATA] === role,
  );
  if (found === undefined) throw new Error(`no ${role} in the template`);
  return found[0];
}

let template: Template;
// Synthesizing the example stack takes a while on a busy machine.
beforeAll(() => {
  template = exampleTemplate() as unknown as Template;
}, 120_000);

let restore: (() => void) | undefined;
afterEach(() => {
  restore?.();
  restore = undefined;
});

describe('outboxOfStack (the synthesized example template)', () => {
  it('finds the tables, queues, dead-letter queues and inboxes by role, with their physical ids', () => {
    const summaries = summariesOf(template.Resources);
    const physical = (role: string) =>
      summaries.find((s) => s.LogicalResourceId === logicalIdOf(template, role))?.PhysicalResourceId;

    const outbox = outboxOfStack({ stackName: STACK, template, summaries });

    expect(outbox.outboxTable).toBe(physical('outbox-table'));
    expect(outbox.auditTable).toBe(physical('audit-table'));
    // The example's two order topics share one queue, its dead-letter queue and its consumer's inbox.
    const both = (role: string) => ({ 'order.created': physical(role), 'order.cancelled': physical(role) });
    expect(outbox.topicQueues).toEqual(both('topic-queue'));
    expect(outbox.topicQueues['order.created']).toMatch(/^https:\/\/sqs\./);
    expect(outbox.deadLetterQueues).toEqual(both('dead-letter-queue'));
    expect(outbox.deliveryInboxes).toEqual(both('inbox-table'));
    expect(outbox.failureQueue).toBe(physical('failure-queue'));
    expect(outbox.dueShards).toBe(8);
    expect(outbox.retentionDays).toBe(30);
    expect(outbox.notes).toEqual([]);
  });

  it('takes DUE_SHARDS from the sweeper environment in the template', () => {
    const sweeper = logicalIdOf(template, 'sweeper');
    const relay = logicalIdOf(template, 'relay');
    const changed = structuredClone(template) as Template & {
      Resources: Record<string, { Properties?: { Environment?: { Variables?: Record<string, unknown> } } }>;
    };
    for (const id of [sweeper, relay]) {
      const variables = changed.Resources[id]?.Properties?.Environment?.Variables;
      if (variables === undefined) throw new Error(`${id} has no environment`);
      variables.DUE_SHARDS = '16';
    }
    const outbox = outboxOfStack({
      stackName: STACK,
      template: changed,
      summaries: summariesOf(changed.Resources),
    });
    expect(outbox.dueShards).toBe(16);
  });

  it('assumes the defaults, and says so, when the deployed template has no function environments', () => {
    const stripped = structuredClone(template) as Template & {
      Resources: Record<string, { Properties?: Record<string, unknown> }>;
    };
    for (const resource of Object.values(stripped.Resources)) delete resource.Properties?.Environment;
    const outbox = outboxOfStack({
      stackName: STACK,
      template: stripped,
      summaries: summariesOf(stripped.Resources),
    });
    expect(outbox.dueShards).toBe(8);
    expect(outbox.notes).toEqual([
      expect.stringContaining('DUE_SHARDS is not in the deployed template'),
      expect.stringContaining('RETENTION_DAYS is not in the deployed template'),
    ]);
  });

  it('refuses a stack whose template carries no role metadata, naming the metadata key', () => {
    const stripped = structuredClone(template);
    for (const resource of Object.values(stripped.Resources)) delete resource.Metadata;
    expect(() => outboxOfStack({ stackName: STACK, template: stripped, summaries: [] })).toThrow(
      /stack OutboxExample: has no outbox: no resource carries serverless-outbox:role metadata/,
    );
  });

  it('refuses a role resource that is not deployed', () => {
    const summaries = summariesOf(template.Resources).filter(
      (s) => s.LogicalResourceId !== logicalIdOf(template, 'audit-table'),
    );
    expect(() => outboxOfStack({ stackName: STACK, template, summaries })).toThrow(
      /audit-table\) is in the template but not deployed/,
    );
  });
});

describe('discoverOutbox', () => {
  it('reads the template, the resources and the outputs of the stack', async () => {
    const { mock, client } = cloudFormationWith();
    restore = () => mock.restore();
    const outbox = await discoverOutbox(client, STACK);
    expect(outbox.outputs.inventoryTableName).toBe(`${STACK}-Inventory-X1`);
    expect(Object.keys(outbox.topicQueues)).toEqual(['order.created', 'order.cancelled']);
  });

  it('says a missing stack is not found, as a configuration error', async () => {
    const { mock, client } = cloudFormationWith();
    restore = () => mock.restore();
    const error = await discoverOutbox(client, 'Nope').catch((caught: unknown) => caught);
    expect(error).toBeInstanceOf(StackDiscoveryError);
    expect(error).toBeInstanceOf(ConfigError);
    expect((error as Error).message).toBe(
      'stack Nope: not found (check --stack, the region and AWS_ENDPOINT_URL)',
    );
  });
});

describe('chooseStackName', () => {
  it('takes --stack as given', async () => {
    const { mock, client } = cloudFormationWith();
    restore = () => mock.restore();
    expect(await chooseStackName(client, { stack: 'Mine' })).toBe('Mine');
    expect(mock.commandCalls(ListStacksCommand)).toHaveLength(0);
  });

  it('picks the one *-local stack of an emulator, ignoring deleted ones', async () => {
    const { mock, client } = cloudFormationWith({ stackName: 'OutboxExample-local' });
    restore = () => mock.restore();
    expect(await chooseStackName(client, { endpoint: 'http://127.0.0.1:5000' })).toBe('OutboxExample-local');
  });

  it('asks for --stack against AWS', async () => {
    const { mock, client } = cloudFormationWith();
    restore = () => mock.restore();
    await expect(chooseStackName(client, {})).rejects.toThrow(/--stack is required/);
  });

  it('asks for --stack when the emulator has no local stack', async () => {
    const { mock, client } = cloudFormationWith({ stackName: 'NotLocal' });
    restore = () => mock.restore();
    await expect(chooseStackName(client, { endpoint: 'http://127.0.0.1:5000' })).rejects.toThrow(
      /no stack named \*-local on the emulator at http:\/\/127.0.0.1:5000/,
    );
  });
});
