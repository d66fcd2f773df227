/**
 * The embedded backend: DynamoDB, DynamoDB Streams and SQS served from this process on a loopback port,
 * backed by the library's in-memory tables, streams and queues, so `npm start` runs the whole app on a
 * machine with nothing but Node. It speaks the AWS JSON protocols the SDK clients use, and deploys a
 * template's tables and queues the way CloudFormation names and wires them, and answers CloudFormation's reads
 * of the deployed stack (what the `outbox` CLI discovers the outbox through). Data lives as long as the process,
 * or on disk in a `dataDir`.
 */
import { MemoryDocumentClient, MemoryQueues, MemoryStreams } from '../../../../../shared/memory/index.ts';
import type { Backend } from '../backend.ts';
import { EMULATOR_REGION } from '../emulator-config.ts';
import { cloudFormationService } from './cloudformation-service.ts';
import { DataDir } from './data-dir.ts';
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
  /** A folder that keeps the backend on disk across stops and kills (see data-dir.ts). @default in memory */
  readonly dataDir?: string;
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
  // Opened before the server listens: a folder that cannot be used fails the start before anything answers.
  const data = options.dataDir === undefined ? undefined : DataDir.open(options.dataDir);
  let server: Awaited<ReturnType<typeof startWireServer>>;
  try {
    server = await startWireServer({
      services: [dynamoDbService(tables), streamsService(streams, scope.region), sqsService(queues)],
      queryServices: [cloudFormationService(deployer)],
      log,
      ...(data === undefined
        ? {}
        : { beforeAnswer: (target, input) => keep({ data, queues }, target, input) }),
    });
    endpoint = server.endpoint;
    await data?.attach({ db, streams, tables, queues, deployer }, endpoint);
  } catch (error) {
    data?.close();
    throw error;
  }
  return {
    kind: 'embedded',
    endpoint,
    ...(data === undefined ? {} : { dataLocation: data.path, stateKey: `embedded ${data.path}` }),
    deploy: async (template, stackName) => {
      data?.touchCatalogs();
      try {
        return deployer.deploy(template, stackName);
      } finally {
        data?.flush();
      }
    },
    stop: async () => {
      await server.close();
      data?.close();
    },
  };
}

/** DynamoDB operations that change tables (not items) and so may change streams too. */
const TABLE_OPERATIONS = new Set(['CreateTable', 'UpdateTable', 'DeleteTable', 'UpdateTimeToLive']);
/** SQS operations that change the catalog of queues rather than messages. */
const QUEUE_CATALOG_OPERATIONS = new Set(['CreateQueue', 'DeleteQueue', 'SetQueueAttributes']);

/** Writes what a request changed to the data folder, before it is answered. */
function keep(
  { data, queues }: { readonly data: DataDir; readonly queues: QueueCatalog },
  target: string,
  input: Record<string, unknown>,
): void {
  const operation = target.slice(target.indexOf('.') + 1);
  if (TABLE_OPERATIONS.has(operation) || QUEUE_CATALOG_OPERATIONS.has(operation)) data.touchCatalogs();
  if (typeof input.QueueUrl === 'string') {
    try {
      data.touchQueues(queues.touched(input.QueueUrl));
    } catch {
      // No such queue: the request changed nothing.
    }
  }
  data.flush();
}
