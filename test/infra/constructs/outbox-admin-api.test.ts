import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import { beforeAll, describe, expect, it } from 'vitest';
import { createAdminHandler } from '../../../shared/lambda/admin-handler.ts';
import { ADMIN_SETTINGS, OutboxSettings } from '../../../shared/settings/outbox-settings.ts';
import { readSetting, type Setting } from '../../../shared/settings/setting.ts';
import {
  type CfnTemplate,
  deployedEnvironment,
  entryOf,
  environmentOf,
  functionId,
  grantsOn,
  idsByRole,
  idsOfType,
  onlyId,
  propertiesOf,
  references,
  resolvedTarget,
  resource,
  roleStatements,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';
import { CONSUMER_ENTRY, outboxService } from './outbox-service.ts';

/** A service whose outbox has a consumer and an admin API on a REST API with other routes. */
function withAdminApi() {
  const service = outboxService({ queues: { orderEvents: { topics: ['order.created'] } } });
  const consumer = service.outbox.addConsumer('InventoryConsumer', {
    queue: 'orderEvents',
    entry: CONSUMER_ENTRY,
  });
  const api = new apigateway.RestApi(service.stack, 'Api', { cloudWatchRole: false });
  api.root.addResource('orders').addMethod('GET', new apigateway.MockIntegration());
  const admin = service.outbox.addAdminApi(api);
  const json = templateOf(service.stack);
  const target = (token: string) => resolvedTarget(service.stack, token);
  const queue = service.outbox.queues.orderEvents;
  if (queue === undefined) throw new Error('no orderEvents queue');
  return {
    ...service,
    json,
    admin,
    fn: functionId(json, 'Outbox/Admin'),
    table: target(service.outbox.table.tableName),
    audit: target(service.outbox.auditTable.tableName),
    inbox: target(consumer.inboxTable.tableName),
    queue: target(queue.queue.queueUrl),
    dlq: target(queue.deadLetterQueue.queueUrl),
  };
}

/** The path of an AWS::ApiGateway::Resource, from its PathPart chain. */
function pathOf(json: CfnTemplate, resourceId: unknown): string {
  const ref = (resourceId as { Ref?: string }).Ref;
  if (ref === undefined) return '';
  const properties = propertiesOf(json, ref);
  return `${pathOf(json, properties.ParentId)}/${String(properties.PathPart)}`;
}

let service: ReturnType<typeof withAdminApi>;

beforeAll(() => {
  service = withAdminApi();
}, SYNTH_TIMEOUT_MS);

describe('TransactionalOutbox.addAdminApi', () => {
  it('puts GET and POST on /admin/{proxy+}, every admin method AWS_IAM-authorised, to the admin function', () => {
    const methods = idsOfType(service.json, 'AWS::ApiGateway::Method').map((id) => ({
      path: pathOf(service.json, propertiesOf(service.json, id).ResourceId),
      properties: propertiesOf(service.json, id),
    }));
    const admin = methods.filter((method) => method.path.startsWith('/admin'));

    expect(admin.map((method) => `${method.properties.HttpMethod} ${method.path}`).sort()).toEqual([
      'GET /admin/{proxy+}',
      'POST /admin/{proxy+}',
    ]);
    for (const method of admin) {
      expect(method.properties.AuthorizationType).toBe('AWS_IAM');
      expect(references(method.properties.Integration, service.fn)).toBe(true);
    }
    // The service's own routes keep their own authorisation.
    expect(methods.find((method) => method.path === '/orders')?.properties.AuthorizationType).toBe('NONE');
  });

  it('gives the admin function exactly the settings ADMIN_SETTINGS names (ORDERED_TOPICS only with an ordered topic, SUBSCRIPTIONS only with a subscriber), with the outbox’s values', () => {
    const names = Object.keys(environmentOf(service.json, service.fn)).filter(
      (name) => !name.startsWith('POWERTOOLS_') && name !== 'NODE_OPTIONS',
    );
    const env = deployedEnvironment(service.json, service.fn);

    // An outbox without ordered topics writes no ORDERED_TOPICS, one without subscribers no SUBSCRIPTIONS: their
    // defaults, no topic ordered and none delivered to subscribers, are the truth.
    const written = ADMIN_SETTINGS.filter(
      (setting) => setting !== OutboxSettings.orderedTopics && setting !== OutboxSettings.subscriptions,
    );
    expect(names.sort()).toEqual(written.map((setting) => setting.name).sort());
    for (const setting of ADMIN_SETTINGS as readonly Setting<unknown>[]) {
      expect(() => readSetting(env, setting), setting.name).not.toThrow();
    }
    expect(readSetting(env, OutboxSettings.orderedTopics)).toEqual({});
    expect(readSetting(env, OutboxSettings.subscriptions)).toEqual({});
    expect(Object.keys(readSetting(env, OutboxSettings.topicQueues))).toEqual(['order.created']);
    expect(Object.keys(readSetting(env, OutboxSettings.deadLetterQueues))).toEqual(['order.created']);
    expect(Object.keys(readSetting(env, OutboxSettings.deliveryInboxes))).toEqual(['order.created']);
    expect(environmentOf(service.json, service.fn).POWERTOOLS_SERVICE_NAME).toBe('outbox-admin');
  });

  it('runs the shipped admin handler, which builds from the environment it is given', async () => {
    const entry = entryOf(service.json, service.fn);
    expect(entry).toMatch(/shared\/lambda\/entries\/admin\.(ts|js)$/);
    const handler = createAdminHandler();
    expect(() => handler.withEnv(deployedEnvironment(service.json, service.fn))).not.toThrow();
  });

  it('allows what the admin core needs on the outbox, the audit trail, the queues and the inbox — nothing more', () => {
    const statements = roleStatements(service.json, service.fn);

    expect(grantsOn(statements, service.table)).toEqual([
      'dynamodb:DeleteItem on Arn',
      'dynamodb:GetItem on Arn',
      'dynamodb:Query on index/attention',
      'dynamodb:Query on index/byAggregate',
      'dynamodb:Query on index/due',
      'dynamodb:UpdateItem on Arn',
    ]);
    expect(grantsOn(statements, service.audit)).toEqual([
      'dynamodb:GetItem on Arn',
      'dynamodb:PutItem on Arn',
      'dynamodb:Query on Arn',
      'dynamodb:UpdateItem on Arn',
    ]);
    expect(grantsOn(statements, service.dlq)).toEqual([
      'sqs:ChangeMessageVisibility on Arn',
      'sqs:DeleteMessage on Arn',
      'sqs:GetQueueAttributes on Arn',
      'sqs:ReceiveMessage on Arn',
      'sqs:StartMessageMoveTask on Arn',
    ]);
    expect(grantsOn(statements, service.queue)).toEqual([
      'sqs:GetQueueAttributes on Arn',
      'sqs:SendMessage on Arn',
    ]);
    // No topic of this service is ordered: nothing on the consumer's inbox (an erase keeps its dedupe rows).
    expect(grantsOn(statements, service.inbox)).toEqual([]);
  });

  it('marks the function with the admin role and alarms on its errors and throttles', () => {
    expect(onlyId(idsByRole(service.json, 'admin'), 'admin function')).toBe(service.fn);
    expect(Object.keys(service.outbox.alarms)).toEqual(
      expect.arrayContaining(['errors/Admin', 'throttles/Admin']),
    );
    const errors = idsOfType(service.json, 'AWS::CloudWatch::Alarm').filter(
      (id) =>
        references(propertiesOf(service.json, id).Dimensions, service.fn) &&
        propertiesOf(service.json, id).MetricName === 'Errors',
    );
    expect(errors).toHaveLength(1);
    expect(resource(service.json, onlyId(errors, 'errors alarm')).Properties?.Threshold).toBe(0);
    expect(service.outbox.adminApi).toBe(service.admin);
  });

  it('lets an erase clear the inbox of a consumer added after the admin API', () => {
    const late = outboxService();
    late.outbox.addAdminApi(new apigateway.RestApi(late.stack, 'Api', { cloudWatchRole: false }));
    const consumer = late.outbox.addConsumer('InventoryConsumer', {
      queue: 'orderEvents',
      entry: CONSUMER_ENTRY,
    });
    const json = templateOf(late.stack);
    const fn = functionId(json, 'Outbox/Admin');

    // The inbox's name as the deployed function sees it (template-queries' stand-in for a table's name).
    const inbox = `deployed-${resolvedTarget(late.stack, consumer.inboxTable.tableName)}`;
    expect(readSetting(deployedEnvironment(json, fn), OutboxSettings.deliveryInboxes)).toEqual({
      'order.created': inbox,
    });
  });

  it('refuses a second admin API', () => {
    const twice = outboxService();
    const api = new apigateway.RestApi(twice.stack, 'Api', { cloudWatchRole: false });
    twice.outbox.addAdminApi(api);

    expect(() => twice.outbox.addAdminApi(api)).toThrow(/already/);
  });
});
