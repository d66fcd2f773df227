/**
 * The bench's in-memory tables served as a DynamoDB endpoint on a loopback port, for a shipped function that
 * builds its own client from the environment (the receipts function: `AWS_ENDPOINT_URL`) and so cannot be handed
 * the bench's client. It speaks the wire protocol of the local runtime's embedded backend over the same tables the
 * rest of the run uses; each call waits the simulated latency, and its writes are counted under one actor.
 */
import { type MemoryDocumentClient, MemoryStreams } from '../../../shared/memory/index.ts';
import { dynamoDbService } from '../local/backends/embedded/dynamodb-service.ts';
import { EMBEDDED_ACCOUNT_ID } from '../local/backends/embedded/index.ts';
import { TableCatalog } from '../local/backends/embedded/table-catalog.ts';
import { type Operation, startWireServer, type WireServer } from '../local/backends/embedded/wire-server.ts';
import { EMULATOR_REGION } from '../local/backends/emulator-config.ts';
import { pause } from './simulated-latency.ts';

/** Options of {@link startDynamoEndpoint}. */
export interface DynamoEndpointOptions {
  /** Simulated latency of one call, in milliseconds. */
  readonly latencyMs: number;
  /**
   * Runs each operation's synchronous part (where the in-memory table commits) inside it: a capacity meter
   * attributes the writes to the endpoint's caller this way. @default - runs it as is
   */
  readonly around?: <T>(operation: () => T) => T;
}

/** Starts the endpoint over `memory`'s tables; `close()` it when done. */
export async function startDynamoEndpoint(
  memory: MemoryDocumentClient,
  options: DynamoEndpointOptions,
): Promise<WireServer> {
  const scope = { region: EMULATOR_REGION, accountId: EMBEDDED_ACCOUNT_ID };
  // The catalog only describes tables; items are read and written on `memory` itself, where they already are.
  const tables = new TableCatalog({ db: memory, streams: new MemoryStreams(memory, scope), ...scope });
  const service = dynamoDbService(tables);
  const around = options.around ?? (<T>(operation: () => T) => operation());
  const operations: Record<string, Operation> = Object.fromEntries(
    Object.entries(service.operations).map(([name, operation]) => [
      name,
      async (input, context) => {
        await pause(options.latencyMs);
        return around(() => operation(input, context));
      },
    ]),
  );
  return startWireServer({
    services: [{ ...service, operations }],
    log: (line) => process.stderr.write(`${line}\n`),
  });
}
