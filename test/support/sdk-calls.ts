/**
 * Records the AWS SDK commands a function really sends — the service, the command and the resource each
 * names — so tests can prove an IAM policy from the code instead of from a declared list. Works on real
 * clients (the local runtime, an emulator) by wrapping the SDK's one `send`, and on aws-sdk-client-mock mocks
 * by reading the calls they received. Calls are attributed to the function whose invocation made them.
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { SQSClient } from '@aws-sdk/client-sqs';

/** The AWS service a command goes to. */
export type SdkService = 'dynamodb' | 'sqs' | 's3' | 'other';

/** The kind of one item of a TransactWriteItems. */
export type TransactItemKind = 'Put' | 'Update' | 'ConditionCheck' | 'Delete';

/** One item of a TransactWriteItems: its kind and its table. */
export interface TransactItemCall {
  readonly kind: TransactItemKind;
  readonly table: string;
  /** For an Update: the top-level attributes its update expression touches. */
  readonly attributes?: readonly string[];
}

/** One command a function sent, with the resource it names. */
export interface SdkCall {
  /** The local name of the function that sent it (`Outbox/Relay`). */
  readonly fn: string;
  readonly service: SdkService;
  /** The API operation, as IAM and the low-level API name it: `UpdateItem`, `SendMessageBatch`. */
  readonly command: string;
  readonly table?: string;
  readonly indexName?: string;
  readonly transactItems?: readonly TransactItemCall[];
  readonly queueUrl?: string;
  readonly bucket?: string;
  readonly key?: string;
  readonly streamArn?: string;
  /** StartMessageMoveTask: the queue it moves from and the one it moves to (ARNs). */
  readonly sourceArn?: string;
  readonly destinationArn?: string;
  /** UpdateItem: the top-level attributes the update expression touches (key attributes not included). */
  readonly attributes?: readonly string[];
  /** UpdateItem: its `ReturnValues` (`NONE` when the request leaves it out). */
  readonly returnValues?: string;
}

/** The Document client's operation names → the low-level API's (which IAM uses). */
const DOCUMENT_OPERATIONS: Readonly<Record<string, string>> = {
  Put: 'PutItem',
  Get: 'GetItem',
  Update: 'UpdateItem',
  Delete: 'DeleteItem',
  BatchGet: 'BatchGetItem',
  BatchWrite: 'BatchWriteItem',
  TransactGet: 'TransactGetItems',
  TransactWrite: 'TransactWriteItems',
};

const DYNAMODB_OPERATIONS = new Set([
  ...Object.values(DOCUMENT_OPERATIONS),
  'Query',
  'Scan',
  'DescribeTable',
  'DescribeStream',
  'GetRecords',
  'GetShardIterator',
  'ListStreams',
]);

/** The operation a command runs: `UpdateCommand` → `UpdateItem`, `SendMessageBatchCommand` → `SendMessageBatch`. */
export function operationOf(command: object): string {
  const name = command.constructor.name.replace(/Command$/, '');
  return DOCUMENT_OPERATIONS[name] ?? name;
}

/** Which service a command of `operation` with `input` goes to, judged by what it names. */
function serviceOf(operation: string, input: Readonly<Record<string, unknown>>): SdkService {
  if (DYNAMODB_OPERATIONS.has(operation)) return 'dynamodb';
  if (
    'QueueUrl' in input ||
    'Entries' in input ||
    operation.includes('Message') ||
    operation.includes('Queue')
  ) {
    return 'sqs';
  }
  if ('Bucket' in input) return 's3';
  return 'other';
}

/** The top-level attribute names an update expression sets, removes, adds to or deletes from. */
export function updatedAttributes(
  expression: string,
  names: Readonly<Record<string, string>> = {},
): string[] {
  const attributes = new Set<string>();
  // Clauses start with their keyword at depth 0; values and functions never hold one of these keywords.
  const clauses = expression.split(/\b(SET|REMOVE|ADD|DELETE)\b/i).slice(1);
  for (let index = 0; index + 1 < clauses.length; index += 2) {
    const keyword = (clauses[index] ?? '').toUpperCase();
    for (const action of splitTopLevel(clauses[index + 1] ?? '')) {
      const target = keyword === 'SET' ? action.split('=')[0] : action.trim().split(/\s+/)[0];
      const first = (target ?? '').trim().split(/[.[]/)[0] ?? '';
      if (first === '') continue;
      attributes.add(first.startsWith('#') ? (names[first] ?? first) : first);
    }
  }
  return [...attributes].sort();
}

/** `a = :x, b = list_append(b, :y)` → its actions, split on commas outside parentheses. */
function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = '';
  for (const character of text) {
    if (character === '(') depth += 1;
    if (character === ')') depth -= 1;
    if (character === ',' && depth === 0) {
      parts.push(current);
      current = '';
    } else {
      current += character;
    }
  }
  if (current.trim() !== '') parts.push(current);
  return parts;
}

type Input = Readonly<Record<string, unknown>>;

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

function updateDetails(input: Input): { attributes: string[] } {
  const expression = text(input.UpdateExpression) ?? '';
  const names = (input.ExpressionAttributeNames ?? {}) as Record<string, string>;
  return { attributes: updatedAttributes(expression, names) };
}

function transactItems(input: Input): TransactItemCall[] {
  const items = Array.isArray(input.TransactItems) ? (input.TransactItems as Input[]) : [];
  return items.flatMap((item) =>
    (['Put', 'Update', 'ConditionCheck', 'Delete'] as const)
      .filter((kind) => item[kind] !== undefined)
      .map((kind) => {
        const part = item[kind] as Input;
        return {
          kind,
          table: text(part.TableName) ?? '?',
          ...(kind === 'Update' ? updateDetails(part) : {}),
        };
      }),
  );
}

/** What one command names, as an {@link SdkCall} of `fn`. */
export function describeCommand(fn: string, command: { readonly input?: unknown }): SdkCall {
  const operation = operationOf(command);
  const input = (command.input ?? {}) as Input;
  const service = serviceOf(operation, input);
  return {
    fn,
    service,
    command: operation,
    ...(text(input.TableName) === undefined ? {} : { table: text(input.TableName) }),
    ...(text(input.IndexName) === undefined ? {} : { indexName: text(input.IndexName) }),
    ...(operation === 'TransactWriteItems' ? { transactItems: transactItems(input) } : {}),
    ...(text(input.QueueUrl) === undefined ? {} : { queueUrl: text(input.QueueUrl) }),
    ...(text(input.Bucket) === undefined ? {} : { bucket: text(input.Bucket) }),
    ...(text(input.Key) === undefined ? {} : { key: text(input.Key) }),
    ...(text(input.StreamArn) === undefined ? {} : { streamArn: text(input.StreamArn) }),
    ...(text(input.SourceArn) === undefined ? {} : { sourceArn: text(input.SourceArn) }),
    ...(text(input.DestinationArn) === undefined ? {} : { destinationArn: text(input.DestinationArn) }),
    ...(operation === 'UpdateItem'
      ? { ...updateDetails(input), returnValues: text(input.ReturnValues) ?? 'NONE' }
      : {}),
  };
}

/** An aws-sdk-client-mock mock, as far as the recorder reads it: the calls it received. */
export interface ReceivedCalls {
  calls(): readonly { readonly args: readonly unknown[] }[];
}

/** The SDK's one `send`, which every client (DynamoDB, the Document client, SQS, S3) inherits. */
type Send = (this: unknown, command: { readonly input?: unknown }, ...rest: unknown[]) => Promise<unknown>;
const clientPrototype = Object.getPrototypeOf(SQSClient.prototype) as { send: Send };

/**
 * Collects the commands functions send. `attribute(fn, work)` runs `work` as function `fn`: every command sent
 * from it — however deep in its promises — is recorded as `fn`'s. Commands sent outside any function (the test
 * itself, the local runtime's pollers) are not recorded.
 * @example
 * const recorder = new SdkCallRecorder();
 * recorder.install();
 * await recorder.attribute('Outbox/Relay', () => handler(event, context));
 * recorder.calls('Outbox/Relay'); // [{ service: 'sqs', command: 'SendMessageBatch', queueUrl: ... }, ...]
 */
export class SdkCallRecorder {
  readonly #calls: SdkCall[] = [];
  readonly #current = new AsyncLocalStorage<string>();
  #restore: (() => void) | undefined;

  /** Runs `work` as function `fn`. */
  attribute<T>(fn: string, work: () => T): T {
    return this.#current.run(fn, work);
  }

  /** Records one command as sent by `fn`. */
  record(fn: string, command: { readonly input?: unknown }): void {
    this.#calls.push(describeCommand(fn, command));
  }

  /**
   * Records, as `fn`'s, every command the aws-sdk-client-mock mocks received since their last reset; call it
   * before resetting them.
   */
  recordMocks(fn: string, mocks: readonly ReceivedCalls[]): void {
    for (const mock of mocks) {
      for (const call of mock.calls()) this.record(fn, call.args[0] as { input?: unknown });
    }
  }

  /** Wraps the SDK's `send` so that real clients' commands are recorded; `uninstall` undoes it. */
  install(): void {
    if (this.#restore !== undefined) return;
    const original = clientPrototype.send;
    const recorder = this;
    clientPrototype.send = function send(this: unknown, command, ...rest) {
      const fn = recorder.#current.getStore();
      if (fn !== undefined) recorder.record(fn, command);
      return original.call(this, command, ...rest);
    };
    this.#restore = () => {
      clientPrototype.send = original;
    };
  }

  /** Puts the SDK's own `send` back. */
  uninstall(): void {
    this.#restore?.();
    this.#restore = undefined;
  }

  /** The calls recorded so far, of one function or of all. */
  calls(fn?: string): SdkCall[] {
    return this.#calls.filter((call) => fn === undefined || call.fn === fn);
  }

  /** The names of the functions that sent at least one command. */
  functions(): string[] {
    return [...new Set(this.#calls.map((call) => call.fn))].sort();
  }

  /** Forgets every recorded call. */
  clear(): void {
    this.#calls.length = 0;
  }
}
