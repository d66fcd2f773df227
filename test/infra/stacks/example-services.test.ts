import { beforeAll, describe, expect, it } from 'vitest';
import { buildExampleApp } from '../../../infra/synth-template.ts';
import {
  actionsOf,
  type CfnTemplate,
  constructName,
  environmentOf,
  functionId,
  idsByRole,
  idsOfType,
  managedPoliciesOf,
  outputTarget,
  type PolicyStatement,
  propertiesOf,
  references,
  resourcesOf,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';

/**
 * The example as three services, each a stack of its own: what each owns, and that no service's role holds an
 * action on another's table (a reference to another stack's table cannot even be written without an import,
 * which none of the stacks has).
 */

interface Service {
  readonly name: 'orders' | 'inventory' | 'loyalty';
  readonly json: CfnTemplate;
}

let services: Service[];

beforeAll(() => {
  const example = buildExampleApp();
  services = [
    { name: 'orders', json: templateOf(example.orders) },
    { name: 'inventory', json: templateOf(example.inventory) },
    { name: 'loyalty', json: templateOf(example.loyalty) },
  ];
}, SYNTH_TIMEOUT_MS);

const service = (name: Service['name']): CfnTemplate => {
  const found = services.find((candidate) => candidate.name === name);
  if (found === undefined) throw new Error(`no service ${name}`);
  return found.json;
};

/** Every statement of every IAM policy (inline or attached) in `json`. */
function allStatements(json: CfnTemplate): PolicyStatement[] {
  return idsOfType(json, 'AWS::Lambda::Function').flatMap((id) => roleStatements(json, id));
}

describe('the example services', () => {
  it('each own their tables, and no stack refers to another stack (no import, no export)', () => {
    expect(
      idsOfType(service('orders'), 'AWS::DynamoDB::Table').map((id) => constructName(service('orders'), id)),
    ).toEqual(expect.arrayContaining(['Orders', 'Outbox/Table', 'Outbox/AuditTable']));
    expect(idsOfType(service('inventory'), 'AWS::DynamoDB::Table')).toHaveLength(3);
    expect(idsOfType(service('loyalty'), 'AWS::DynamoDB::Table')).toHaveLength(3);
    for (const { name, json } of services) {
      const text = JSON.stringify(json);
      expect(text, name).not.toContain('Fn::ImportValue');
      expect(JSON.stringify(json.Outputs), name).not.toContain('"Export"');
    }
  });

  it('grant DynamoDB actions only on the tables (and their indexes) of their own stack', () => {
    for (const { name, json } of services) {
      const tables = idsOfType(json, 'AWS::DynamoDB::Table');
      // ListStreams (what a stream mapping's role lists the streams with) has no resource: it names no table.
      const onTables = allStatements(json).filter((statement) =>
        actionsOf(statement).some(
          (action) => action.startsWith('dynamodb:') && action !== 'dynamodb:ListStreams',
        ),
      );
      expect(onTables.length, name).toBeGreaterThan(0);
      for (const statement of onTables) {
        for (const target of resourcesOf(statement)) {
          expect(
            tables.some((table) => references(target, table)),
            `${name}: ${JSON.stringify(target)}`,
          ).toBe(true);
        }
      }
    }
  });

  it('cross only by messages: the producer sends to its subscribers’ queues, the subscribers send it receipts', () => {
    const orders = service('orders');
    for (const fn of ['Outbox/Relay', 'Outbox/Sweeper']) {
      const sends = roleStatements(orders, functionId(orders, fn)).filter((s) =>
        actionsOf(s).includes('sqs:SendMessage'),
      );
      const targets = JSON.stringify(sends.flatMap(resourcesOf));
      expect(targets).toContain(':OutboxOrders-Outbox-inventory');
      expect(targets).toContain(':OutboxOrders-Outbox-loyalty');
    }
    for (const [name, consumer] of [
      ['inventory', 'Inventory/Consumer'],
      ['loyalty', 'Loyalty/Consumer'],
    ] as const) {
      const json = service(name);
      const id = functionId(json, consumer);
      const env = environmentOf(json, id);
      expect(env.SUBSCRIBER).toBe(name);
      expect(JSON.stringify(env.RECEIPT_QUEUE_URL)).toContain('/OutboxOrders-Outbox-receipts');
      const sqs = roleStatements(json, id).filter((s) =>
        actionsOf(s).some((action) => action.startsWith('sqs:')),
      );
      // Its own dead-letter queue (it dead-letters itself), its own queue (the mapping), the producer's receipts.
      const foreign = sqs
        .flatMap(resourcesOf)
        .filter((target) => !idsOfType(json, 'AWS::SQS::Queue').some((queue) => references(target, queue)));
      expect(JSON.stringify(foreign)).toContain(':OutboxOrders-Outbox-receipts');
      expect(foreign).toHaveLength(1);
    }
  });

  it('serve their own routes, each on its own API; the outbox’s admin routes on the order service’s', () => {
    const routes = (json: CfnTemplate) =>
      idsOfType(json, 'AWS::ApiGateway::Method').map((id) => String(propertiesOf(json, id).HttpMethod));
    expect(routes(service('orders')).sort()).toEqual(['GET', 'GET', 'POST', 'POST', 'POST']);
    expect(routes(service('inventory')).sort()).toEqual(['GET', 'PUT']);
    expect(routes(service('loyalty'))).toEqual(['GET']);
    expect(idsByRole(service('orders'), 'admin')).toHaveLength(1);
  });

  it('name their outputs so that no two stacks share one', () => {
    const names = services.flatMap(({ json }) => Object.keys(json.Outputs));
    expect(new Set(names).size).toBe(names.length);
    expect(outputTarget(service('inventory'), 'inventoryInboxTableName')).toBeDefined();
    expect(outputTarget(service('loyalty'), 'loyaltyInboxTableName')).toBeDefined();
  });

  it('attach no managed policy to any function', () => {
    for (const { json } of services) {
      for (const id of idsOfType(json, 'AWS::Lambda::Function'))
        expect(managedPoliciesOf(json, id)).toEqual([]);
    }
  });

  it('key the subscribers’ inboxes per subscriber and tell each consumer the order topics’ sequence', () => {
    for (const [name, consumer] of [
      ['inventory', 'Inventory/Consumer'],
      ['loyalty', 'Loyalty/Consumer'],
    ] as const) {
      const json = service(name);
      const env = environmentOf(json, functionId(json, consumer));
      expect(JSON.parse(String(env.ORDERED_TOPICS))).toEqual({
        'order.created': { scope: 'order', sequence: 'aggregate-version', gapTimeoutMs: 300_000 },
        'order.cancelled': { scope: 'order', sequence: 'aggregate-version', gapTimeoutMs: 300_000 },
      });
      expect(env).not.toHaveProperty('OUTBOX_TABLE');
    }
  });
});
