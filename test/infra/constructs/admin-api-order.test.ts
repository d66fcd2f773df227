import { Duration, Stack } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as kms from 'aws-cdk-lib/aws-kms';
import { TransactionalOutbox } from 'serverless-outbox/cdk';
import { describe, expect, it } from 'vitest';
import { type CfnTemplate, SYNTH_TIMEOUT_MS, templateOf, testApp } from '../template-queries.ts';
import { CONSUMER_ENTRY, serviceFunction } from './outbox-service.ts';

/** When `addAdminApi` is called: before both consumers, between them or after both. */
type AdminPlace = 'first' | 'between' | 'last';

/**
 * A service whose outbox has everything the admin API is wired to — two consumers (one of ordered topics, so its
 * inbox gets the skip's grants), the claim check, a customer-managed key, the archive and a writer of the counter
 * — with the admin API added at `place`.
 */
function serviceWithAdminApi(place: AdminPlace): CfnTemplate {
  const stack = new Stack(testApp(), 'Service');
  const encryptionKey = new kms.Key(stack, 'Key', { enableKeyRotation: true });
  const outbox = new TransactionalOutbox(stack, 'Outbox', {
    queues: {
      orderEvents: { topics: ['order.created', 'order.cancelled'] },
      payments: { topics: ['payment.captured'] },
    },
    ordering: {
      'order.created': { scope: 'order' },
      'order.cancelled': { scope: 'order', gapTimeout: Duration.minutes(2) },
    },
    archive: true,
    encryptionKey,
  });
  const api = new apigateway.RestApi(stack, 'Api', { cloudWatchRole: false });
  api.root.addResource('orders').addMethod('GET', new apigateway.MockIntegration());
  const addAdminApi = () => outbox.addAdminApi(api);

  if (place === 'first') addAdminApi();
  outbox.addConsumer('InventoryConsumer', { queue: 'orderEvents', entry: CONSUMER_ENTRY });
  if (place === 'between') addAdminApi();
  outbox.addConsumer('PaymentConsumer', { queue: 'payments', entry: CONSUMER_ENTRY, confirm: false });
  if (place === 'last') addAdminApi();
  outbox.bindWriter(serviceFunction(stack, 'Writer'));
  return templateOf(stack);
}

describe('TransactionalOutbox.addAdminApi and addConsumer', () => {
  it(
    'synthesize the same template whichever is called first',
    () => {
      // Consumers first was the only order allowed before: the template every deployed stack has.
      const last = serviceWithAdminApi('last');

      expect(serviceWithAdminApi('first')).toEqual(last);
      expect(serviceWithAdminApi('between')).toEqual(last);
    },
    SYNTH_TIMEOUT_MS,
  );

  it(
    'write each resource the same way, down to the order of its keys',
    () => {
      // Deep equality ignores the order of an object's keys, a resource's text does not (a function version's
      // hash reads its variables in order). Only the order of the resources themselves may differ: they are
      // written in the order they were created, which CloudFormation does not read.
      const text = (template: CfnTemplate) =>
        Object.fromEntries(
          Object.entries(template.Resources).map(([id, resource]) => [id, JSON.stringify(resource)]),
        );

      expect(text(serviceWithAdminApi('first'))).toEqual(text(serviceWithAdminApi('last')));
    },
    SYNTH_TIMEOUT_MS,
  );
});
