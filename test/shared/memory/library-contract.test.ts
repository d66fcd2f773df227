import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { manualClock } from '../../support/factories.ts';
import {
  CONTRACT_TABLE_SCHEMAS,
  describeDocumentClientContract,
} from './contract/document-client-contract.ts';

/**
 * The DynamoDB contract on the in-memory DynamoDB: if it passes here and on moto
 * (test/integration/memory-contract.test.ts), the scale drill and every unit test that uses the fake exercise the
 * same expressions, outcomes and refusals as production.
 */
describeDocumentClientContract({
  name: 'memory',
  open: async () => {
    const clock = manualClock();
    const db = new MemoryDocumentClient(CONTRACT_TABLE_SCHEMAS, { clock: clock.now });
    return {
      client: db.asDocumentClient(),
      tables: { outbox: 'outbox', inbox: 'inbox', orders: 'orders', inventory: 'inventory' },
      elapse: clock.advance,
    };
  },
});
