/**
 * The embedded backend: DynamoDB, DynamoDB Streams and SQS served from this process on a loopback port,
 * backed by the library's in-memory tables, streams and queues, so `npm start` runs the whole app on a
 * machine with nothing but Node. It speaks the AWS JSON protocols the SDK clients use, and deploys a
 * template's tables and queues the way CloudFormation names and wires them, and answers CloudFormation's reads
 * of the deployed stack (what the `outbox` CLI discovers the outbox through). Data lives as long as the process.
 */
import { MemoryDocumentClient } from '../../../shared/memory/memory-document-client.ts';
import { MemoryQueues } from '../../../shared/memory/memory-queues.ts';
import { MemoryStreams } from '../../../shared/memory/memory-streams.ts';
import type { Backend } from '../backend.ts';
import { EMULATOR_REGION } from '../emulator-config.ts';
import { cloudFormationService } from './cloudformation-service.ts';
import { dynamoDbService } from './dynamodb-service.ts';
import { QueueCatalog } from './queue-catalog.ts';
import { sqsService } from './sqs-service.ts';
import { StackDeployer } from './stack-deployer.ts';
import { streamsService } from './streams-service.ts';
import { TableCatalog } from './table-catalog.ts';
import { startWireServer } from './wire-server.ts';

/** Options of {@link startEmbeddedBackend}. */
export interface EmbeddedBackendOptions {
  /** Receives deploy notes and internal errors. @default stderr */
  readonly log?: (line: string) => void;
}

/** The account the embedded backend's ARNs and queue URLs name (the one moto uses). */
export const EMBEDDED_ACCOUNT_ID = '123456789012';

/**
 * Starts the embedded backend on a free port of 127.0.0.1.
 * @example
 * const backend = await startEmbeddedBackend();
 * const stack = await backend.deploy(template, 'App-local');
 * const dynamodb = new DynamoDBClient({ endpoint: backend.endpoint, region: 'us-east-1', credentials });
 * await backend.stop();
 */
export async function startEmbeddedBackend(options: EmbeddedBackendOptions = {}): Promise<Backend> {
  const log = options.log ?? ((line: string) => process.stderr.write(`${line}\n`));
  const scope = { region: EMULATOR_REGION, accountId: EMBEDDED_ACCOUNT_ID };
  const db = new MemoryDocumentClient({});
  const streams = new MemoryStreams(db, scope);
  const tables = new TableCatalog({ db, streams, ...scope });
  let endpoint = '';
  const queues = new QueueCatalog({
    queues: new MemoryQueues({}, () => new Date()),
    endpoint: () => endpoint,
    ...scope,
  });
  const deployer = new StackDeployer({ tables, queues, log, ...scope });
  const server = await startWireServer({
    services: [dynamoDbService(tables), streamsService(streams, scope.region), sqsService(queues)],
    queryServices: [cloudFormationService(deployer)],
    log,
  });
  endpoint = server.endpoint;
  return {
    kind: 'embedded',
    endpoint,
    deploy: async (template, stackName) => deployer.deploy(template, stackName),
    stop: () => server.close(),
  };
}
