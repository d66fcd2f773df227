import { describe } from 'vitest';
import type { ContractBackend } from './contract-backend.ts';
import { describeLibraryCalls } from './library-calls.ts';
import { describeOperations } from './operations.ts';
import { describeRefusals } from './refusals.ts';

export {
  CONTRACT_TABLE_SCHEMAS,
  type ContractBackend,
  type ContractSession,
  type ContractTables,
} from './contract-backend.ts';

/**
 * The contract of the in-memory DynamoDB: what the library relies on DynamoDB to do and to refuse, run on a
 * backend. The unit tests run it on `MemoryDocumentClient`, the integration tests on a real Document client
 * talking to moto, so the fake cannot drift from the service. Where moto itself differs from DynamoDB, the case
 * runs on the fake only and its title names the gap.
 * @example
 * describeDocumentClientContract({ name: 'memory', open: async () => ({ client, tables }) });
 */
export function describeDocumentClientContract(backend: ContractBackend): void {
  describe(`DynamoDB contract on ${backend.name}`, () => {
    describe("the library's calls", () => describeLibraryCalls(backend));
    describe('operations and options', () => describeOperations(backend));
    describe('refusals', () => describeRefusals(backend));
  });
}
