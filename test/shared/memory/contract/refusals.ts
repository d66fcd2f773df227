import {
  GetCommand,
  PutCommand,
  QueryCommand,
  ScanCommand,
  TransactWriteCommand,
  type TransactWriteCommandInput,
  UpdateCommand,
} from '@aws-sdk/lib-dynamodb';
import { beforeEach, describe, expect, it } from 'vitest';
import { sendFailureUpdate } from '../../../../shared/aws/outbox-table/transition-updates.ts';
import { MessageStatus } from '../../../../shared/message/message-status.ts';
import { FIXED_NOW, outboxItem, testMessageId } from '../../../support/factories.ts';
import {
  type ContractBackend,
  type ContractSession,
  type ContractTables,
  itUnlessMoto,
  rejectionOf,
  storedItem,
} from './contract-backend.ts';

type TransactItems = NonNullable<TransactWriteCommandInput['TransactItems']>;

/** A request DynamoDB refuses, and how. */
interface Refusal {
  readonly title: string;
  readonly send: (session: ContractSession) => Promise<unknown>;
  readonly name: 'ValidationException';
  /** The gist of DynamoDB's message. */
  readonly message: string | RegExp;
  /** moto refuses it with the same name but another message (why). */
  readonly motoMessageGap?: string;
  /** moto does not refuse it at all (what it does instead). */
  readonly motoGap?: string;
}

// DynamoDB's item limit: 400 KB = 409,600 bytes of attribute names and values.
const OVER_400_KB = 'x'.repeat(410 * 1024);
const ORDER_KEY = { orderId: 'o-1' };

const updateOrder = (session: ContractSession, update: Omit<UpdateCommand['input'], 'TableName' | 'Key'>) =>
  session.client.send(new UpdateCommand({ TableName: session.tables.orders, Key: ORDER_KEY, ...update }));

const transact = (session: ContractSession, items: TransactItems) =>
  session.client.send(new TransactWriteCommand({ TransactItems: [...items] }));

const queryDue = (session: ContractSession, values: Record<string, unknown>) =>
  session.client.send(
    new QueryCommand({
      TableName: session.tables.outbox,
      IndexName: 'due',
      KeyConditionExpression: '#shard = :shard AND #nextAttemptAt <= :now',
      ExpressionAttributeNames: { '#shard': 'dueShard', '#nextAttemptAt': 'nextAttemptAt' },
      ExpressionAttributeValues: values,
    }),
  );

const UNDEFINED_VALUES: readonly Refusal[] = [
  {
    title: 'an undefined expression value (the Document client drops it, leaving the map empty)',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #amount = :amount',
        ExpressionAttributeNames: { '#amount': 'amount' },
        ExpressionAttributeValues: { ':amount': undefined },
      }),
    name: 'ValidationException',
    message: 'ExpressionAttributeValues must not be empty',
  },
  {
    title: 'an undefined value beside defined ones in an UpdateExpression',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #amount = :amount, #note = :note',
        ExpressionAttributeNames: { '#amount': 'amount', '#note': 'note' },
        ExpressionAttributeValues: { ':amount': undefined, ':note': 'n' },
      }),
    name: 'ValidationException',
    message:
      'Invalid UpdateExpression: An expression attribute value used in expression is not defined; attribute value: :amount',
  },
  {
    title:
      'an undefined value in a ConditionExpression (a send failure recorded without the attempts it saw)',
    send: (session) =>
      session.client.send(
        new UpdateCommand({
          TableName: session.tables.outbox,
          ...sendFailureUpdate({
            messageId: testMessageId(1),
            seenAttempts: undefined as unknown as number,
            decision: { kind: 'retry', attempts: 1, nextAttemptAt: FIXED_NOW },
            error: 'Throttled',
            now: FIXED_NOW,
          }),
        }),
      ),
    name: 'ValidationException',
    message:
      'Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :seen',
    motoGap: 'moto answers HTTP 500 (an HTML page the SDK cannot read) instead of a ValidationException',
  },
  {
    title: 'an undefined value in a KeyConditionExpression',
    send: (session) => queryDue(session, { ':shard': '0', ':now': undefined }),
    name: 'ValidationException',
    message:
      'Invalid KeyConditionExpression: An expression attribute value used in expression is not defined; attribute value: :now',
    motoMessageGap:
      "moto says 'Invalid condition in KeyConditionExpression: Multiple attribute names used in one condition'",
  },
  {
    title: 'an undefined value in an Update of a transaction',
    send: (session) =>
      transact(session, [
        {
          Update: {
            TableName: session.tables.inventory,
            Key: { sku: 'SKU-1' },
            UpdateExpression: 'SET #available = #available - :quantity, #note = :note',
            ExpressionAttributeNames: { '#available': 'available', '#note': 'note' },
            ExpressionAttributeValues: { ':quantity': undefined, ':note': 'n' },
          },
        },
      ]),
    name: 'ValidationException',
    message:
      'Invalid UpdateExpression: An expression attribute value used in expression is not defined; attribute value: :quantity',
  },
  {
    title: 'a name placeholder the request does not define',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #amount = :v, #nope = :v',
        ExpressionAttributeNames: { '#amount': 'amount' },
        ExpressionAttributeValues: { ':v': 1 },
      }),
    name: 'ValidationException',
    message:
      'Invalid UpdateExpression: An expression attribute name used in the document path is not defined; attribute name: #nope',
    motoGap: 'moto answers HTTP 500 instead of a ValidationException',
  },
];

const UNUSED_PLACEHOLDERS: readonly Refusal[] = [
  {
    title: 'an unused ExpressionAttributeNames entry in an UpdateItem',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #amount = :v',
        ExpressionAttributeNames: { '#amount': 'amount', '#unused': 'x' },
        ExpressionAttributeValues: { ':v': 1 },
      }),
    name: 'ValidationException',
    message: 'Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}',
  },
  {
    title: 'an unused ExpressionAttributeNames entry in a GetItem projection',
    send: (session) =>
      session.client.send(
        new GetCommand({
          TableName: session.tables.orders,
          Key: ORDER_KEY,
          ProjectionExpression: '#amount',
          ExpressionAttributeNames: { '#amount': 'amount', '#unused': 'x' },
        }),
      ),
    name: 'ValidationException',
    message: 'Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}',
  },
  {
    title: 'an unused ExpressionAttributeNames entry in a Put of a transaction',
    send: (session) =>
      transact(session, [
        {
          Put: {
            TableName: session.tables.orders,
            Item: { orderId: 'o-2' },
            ConditionExpression: 'attribute_not_exists(#orderId)',
            ExpressionAttributeNames: { '#orderId': 'orderId', '#unused': 'x' },
          },
        },
      ]),
    name: 'ValidationException',
    message: 'Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}',
  },
  {
    title: 'an unused ExpressionAttributeValues entry in an UpdateItem',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #amount = :v',
        ExpressionAttributeNames: { '#amount': 'amount' },
        ExpressionAttributeValues: { ':v': 1, ':unused': 2 },
      }),
    name: 'ValidationException',
    message: 'Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}',
  },
  {
    title: 'an unused ExpressionAttributeValues entry in a Query',
    send: (session) => queryDue(session, { ':shard': '0', ':now': FIXED_NOW.toISOString(), ':unused': 1 }),
    name: 'ValidationException',
    message: 'Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}',
    motoGap: 'moto runs the query',
  },
  {
    title: 'an unused ExpressionAttributeValues entry in an Update of a transaction',
    send: (session) =>
      transact(session, [
        {
          Update: {
            TableName: session.tables.orders,
            Key: ORDER_KEY,
            UpdateExpression: 'SET #amount = :v',
            ExpressionAttributeNames: { '#amount': 'amount' },
            ExpressionAttributeValues: { ':v': 1, ':unused': 2 },
          },
        },
      ]),
    name: 'ValidationException',
    message: 'Value provided in ExpressionAttributeValues unused in expressions: keys: {:unused}',
    motoGap: 'moto commits the transaction',
  },
  {
    title: 'ExpressionAttributeValues on a request without expressions',
    send: (session) =>
      session.client.send(
        new PutCommand({
          TableName: session.tables.orders,
          Item: { orderId: 'o-2' },
          ExpressionAttributeValues: { ':v': 1 },
        }),
      ),
    name: 'ValidationException',
    message: 'ExpressionAttributeValues can only be specified when using expressions',
    motoGap: 'moto writes the item',
  },
  {
    title: 'ExpressionAttributeNames on a request without expressions',
    send: (session) =>
      session.client.send(
        new PutCommand({
          TableName: session.tables.orders,
          Item: { orderId: 'o-2' },
          ExpressionAttributeNames: { '#n': 'n' },
        }),
      ),
    name: 'ValidationException',
    message: 'ExpressionAttributeNames can only be specified when using expressions',
    motoMessageGap: 'moto reports the names as unused',
  },
  {
    title: 'an empty ExpressionAttributeNames map',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET amount = :v',
        ExpressionAttributeNames: {},
        ExpressionAttributeValues: { ':v': 1 },
      }),
    name: 'ValidationException',
    message: 'ExpressionAttributeNames must not be empty',
    motoGap: 'moto applies the update',
  },
  {
    title: 'an empty ExpressionAttributeValues map',
    send: (session) =>
      updateOrder(session, { UpdateExpression: 'REMOVE amount', ExpressionAttributeValues: {} }),
    name: 'ValidationException',
    message: 'ExpressionAttributeValues must not be empty',
  },
];

const EMPTY_KEY = /empty string.*Key: orderId/;

const EMPTY_KEYS: readonly Refusal[] = [
  {
    title: 'an empty string as the key of a PutItem',
    send: (session) =>
      session.client.send(new PutCommand({ TableName: session.tables.orders, Item: { orderId: '' } })),
    name: 'ValidationException',
    message: EMPTY_KEY,
  },
  {
    title: 'an empty string as the key of a GetItem',
    send: (session) =>
      session.client.send(new GetCommand({ TableName: session.tables.orders, Key: { orderId: '' } })),
    name: 'ValidationException',
    message: EMPTY_KEY,
  },
  {
    title: 'an empty string as the key of an UpdateItem',
    send: (session) =>
      session.client.send(
        new UpdateCommand({
          TableName: session.tables.orders,
          Key: { orderId: '' },
          UpdateExpression: 'SET #amount = :v',
          ExpressionAttributeNames: { '#amount': 'amount' },
          ExpressionAttributeValues: { ':v': 1 },
        }),
      ),
    name: 'ValidationException',
    message: EMPTY_KEY,
    motoGap: 'moto creates an item whose key is the empty string',
  },
  {
    title: 'an empty string as the partition value of a Query on an index',
    send: (session) => queryDue(session, { ':shard': '', ':now': FIXED_NOW.toISOString() }),
    name: 'ValidationException',
    message: /empty string.*Key: dueShard/,
  },
  {
    title: 'an empty string as the key of a Put of a transaction',
    send: (session) =>
      transact(session, [{ Put: { TableName: session.tables.orders, Item: { orderId: '' } } }]),
    name: 'ValidationException',
    message: EMPTY_KEY,
  },
  {
    title: 'an empty string as the key of an Update of a transaction',
    send: (session) =>
      transact(session, [
        {
          Update: {
            TableName: session.tables.orders,
            Key: { orderId: '' },
            UpdateExpression: 'SET #amount = :v',
            ExpressionAttributeNames: { '#amount': 'amount' },
            ExpressionAttributeValues: { ':v': 1 },
          },
        },
      ]),
    name: 'ValidationException',
    message: EMPTY_KEY,
  },
  {
    title: 'an empty string as the key of a ConditionCheck of a transaction',
    send: (session) =>
      transact(session, [
        {
          ConditionCheck: {
            TableName: session.tables.orders,
            Key: { orderId: '' },
            ConditionExpression: 'attribute_exists(#orderId)',
            ExpressionAttributeNames: { '#orderId': 'orderId' },
          },
        },
      ]),
    name: 'ValidationException',
    message: EMPTY_KEY,
    motoGap: 'moto evaluates the condition and cancels the transaction (ConditionalCheckFailed)',
  },
  {
    title: 'an empty string as an index key in a PutItem',
    send: (session) =>
      session.client.send(
        new PutCommand({
          TableName: session.tables.outbox,
          Item: { ...outboxItem({ messageId: testMessageId(2), dueShard: '' }) },
        }),
      ),
    name: 'ValidationException',
    message: /secondary index key.*empty string.*IndexName: due, IndexKey: dueShard/,
  },
  {
    title: 'an empty string as an index key set by an UpdateItem',
    send: (session) =>
      session.client.send(
        new UpdateCommand({
          TableName: session.tables.outbox,
          Key: { messageId: testMessageId(1) },
          UpdateExpression: 'SET #shard = :empty',
          ExpressionAttributeNames: { '#shard': 'dueShard' },
          ExpressionAttributeValues: { ':empty': '' },
        }),
      ),
    name: 'ValidationException',
    message: /secondary index key.*empty string.*IndexName: due, IndexKey: dueShard/,
    motoGap: 'moto stores the empty index key',
  },
];

const OVERLAP = 'Invalid UpdateExpression: Two document paths overlap with each other';

const UPDATE_EXPRESSIONS: readonly Refusal[] = [
  {
    title: 'an update that SETs one path twice',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #amount = :x, #amount = :y',
        ExpressionAttributeNames: { '#amount': 'amount' },
        ExpressionAttributeValues: { ':x': 1, ':y': 2 },
      }),
    name: 'ValidationException',
    message: `${OVERLAP}; must remove or rewrite one of these paths; path one: [amount], path two: [amount]`,
  },
  {
    title: 'an update that SETs a path inside a map it REMOVEs',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET details.note = :x REMOVE details',
        ExpressionAttributeValues: { ':x': 'm' },
      }),
    name: 'ValidationException',
    message: `${OVERLAP}; must remove or rewrite one of these paths; path one: [details, note], path two: [details]`,
  },
  {
    title: 'an update that SETs a path inside a map it REMOVEs, both written with name placeholders',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #details.#note = :x REMOVE #details',
        ExpressionAttributeNames: { '#details': 'details', '#note': 'note' },
        ExpressionAttributeValues: { ':x': 'm' },
      }),
    name: 'ValidationException',
    message: `${OVERLAP}; must remove or rewrite one of these paths; path one: [details, note], path two: [details]`,
    motoGap: 'moto misses the overlap of nested paths written with placeholders and removes the map',
  },
  {
    title: 'an update that reaches one attribute through a name placeholder and by its name',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #amount = :x, amount = :y',
        ExpressionAttributeNames: { '#amount': 'amount' },
        ExpressionAttributeValues: { ':x': 1, ':y': 2 },
      }),
    name: 'ValidationException',
    message: OVERLAP,
  },
  {
    title: 'an update that SETs and ADDs one attribute',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #amount = :x ADD #amount :y',
        ExpressionAttributeNames: { '#amount': 'amount' },
        ExpressionAttributeValues: { ':x': 1, ':y': 2 },
      }),
    name: 'ValidationException',
    message: OVERLAP,
  },
  {
    title: 'an Update of a transaction that touches one path twice',
    send: (session) =>
      transact(session, [
        {
          Update: {
            TableName: session.tables.orders,
            Key: ORDER_KEY,
            UpdateExpression: 'SET #amount = :x REMOVE #amount',
            ExpressionAttributeNames: { '#amount': 'amount' },
            ExpressionAttributeValues: { ':x': 1 },
          },
        },
      ]),
    name: 'ValidationException',
    message: OVERLAP,
  },
  {
    title: 'arithmetic on an attribute the item does not have (no implicit 0)',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #attempts = #attempts + :one',
        ExpressionAttributeNames: { '#attempts': 'attempts' },
        ExpressionAttributeValues: { ':one': 1 },
      }),
    name: 'ValidationException',
    message: 'The provided expression refers to an attribute that does not exist in the item',
  },
  {
    title: 'a SET inside a map the item does not have',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #missing.#note = :x',
        ExpressionAttributeNames: { '#missing': 'missing', '#note': 'note' },
        ExpressionAttributeValues: { ':x': 'n' },
      }),
    name: 'ValidationException',
    message: 'The document path provided in the update expression is invalid for update',
  },
  {
    title: 'an update of a key attribute',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #orderId = :other',
        ExpressionAttributeNames: { '#orderId': 'orderId' },
        ExpressionAttributeValues: { ':other': 'o-9' },
      }),
    name: 'ValidationException',
    message: 'Cannot update attribute orderId. This attribute is part of the key',
  },
];

const RESERVED = 'Attribute name is a reserved keyword; reserved keyword: status';

const OTHER_REFUSALS: readonly Refusal[] = [
  {
    title: 'an item over 400 KB in a PutItem',
    send: (session) =>
      session.client.send(
        new PutCommand({ TableName: session.tables.orders, Item: { orderId: 'o-2', note: OVER_400_KB } }),
      ),
    name: 'ValidationException',
    message: 'Item size has exceeded the maximum allowed size',
  },
  {
    title: 'an UpdateItem that grows an item over 400 KB',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET #note = :note',
        ExpressionAttributeNames: { '#note': 'note' },
        ExpressionAttributeValues: { ':note': OVER_400_KB },
      }),
    name: 'ValidationException',
    message: 'Item size to update has exceeded the maximum allowed size',
  },
  {
    title: 'an item over 400 KB in a Put of a transaction',
    send: (session) =>
      transact(session, [
        { Put: { TableName: session.tables.orders, Item: { orderId: 'o-2', note: OVER_400_KB } } },
      ]),
    name: 'ValidationException',
    message: 'Item size has exceeded the maximum allowed size',
  },
  {
    title: 'a reserved word as an attribute name in an UpdateExpression',
    send: (session) =>
      updateOrder(session, {
        UpdateExpression: 'SET status = :s',
        ExpressionAttributeValues: { ':s': 'NEW' },
      }),
    name: 'ValidationException',
    message: `Invalid UpdateExpression: ${RESERVED}`,
  },
  {
    title: 'a reserved word as an attribute name in a ConditionExpression',
    send: (session) =>
      session.client.send(
        new PutCommand({
          TableName: session.tables.orders,
          Item: { orderId: 'o-2' },
          ConditionExpression: 'attribute_not_exists(status)',
        }),
      ),
    name: 'ValidationException',
    message: `Invalid ConditionExpression: ${RESERVED}`,
  },
  {
    title: 'a reserved word as an attribute name in a ProjectionExpression',
    send: (session) =>
      session.client.send(
        new GetCommand({ TableName: session.tables.orders, Key: ORDER_KEY, ProjectionExpression: 'status' }),
      ),
    name: 'ValidationException',
    message: RESERVED,
  },
  {
    title: 'a Scan with Limit 0',
    send: (session) => session.client.send(new ScanCommand({ TableName: session.tables.orders, Limit: 0 })),
    name: 'ValidationException',
    message:
      /Value '0' at 'limit' failed to satisfy constraint: Member must have value greater than or equal to 1/,
    motoGap: 'moto answers HTTP 500 instead of a ValidationException',
  },
];

/**
 * What DynamoDB refuses that the library or a service's code could send: undefined, unused or missing
 * placeholders, empty key strings, update expressions touching one path twice, items over 400 KB, reserved
 * words. Each case checks the error's name and the gist of DynamoDB's message, and that nothing was written.
 */
export function describeRefusals(backend: ContractBackend): void {
  let session: ContractSession;
  let before: Record<string, unknown>;

  async function contents(): Promise<Record<string, unknown>> {
    const tables = Object.keys(session.tables) as (keyof ContractTables)[];
    const scans = await Promise.all(
      tables.map(async (table) => {
        const { Items } = await session.client.send(new ScanCommand({ TableName: session.tables[table] }));
        return [table, (Items ?? []).map((item) => JSON.stringify(item)).sort()] as const;
      }),
    );
    return Object.fromEntries(scans);
  }

  // Fresh tables per case: a request a backend wrongly accepts must not change what the next case sees.
  beforeEach(async () => {
    session = await backend.open();
    for (const [table, item] of [
      ['orders', { orderId: 'o-1', total: 1, details: { note: 'n' } }],
      ['inventory', { sku: 'SKU-1', available: 5 }],
      [
        'outbox',
        { ...outboxItem({ messageId: testMessageId(1), dueShard: '0', status: MessageStatus.PENDING }) },
      ],
    ] as const) {
      await session.client.send(new PutCommand({ TableName: session.tables[table], Item: item }));
    }
    before = await contents();
  });

  const groups = [
    ['undefined expression values and names', UNDEFINED_VALUES],
    ['unused or empty placeholder maps', UNUSED_PLACEHOLDERS],
    ['empty key strings', EMPTY_KEYS],
    ['update expressions', UPDATE_EXPRESSIONS],
    ['item size, reserved words, Limit', OTHER_REFUSALS],
  ] as const;
  for (const [group, refusals] of groups) {
    describe(group, () => {
      for (const refusal of refusals)
        describeRefusal({ backend, refusal, session: () => session, before: () => before, contents });
    });
  }

  itUnlessMoto(backend, 'moto refuses items over 405,000 bytes, and counts bytes its own way')(
    'accepts an item just under 400 KB (408,000 bytes)',
    async () => {
      const item = { orderId: 'o-big', note: 'x'.repeat(408_000) };
      await session.client.send(new PutCommand({ TableName: session.tables.orders, Item: item }));

      expect(
        await storedItem(session, { TableName: session.tables.orders, Key: { orderId: 'o-big' } }),
      ).toEqual(item);
    },
  );
}

/** The test (or, where moto's message differs, the two tests) of one refusal. */
function describeRefusal(setup: {
  backend: ContractBackend;
  refusal: Refusal;
  session: () => ContractSession;
  before: () => Record<string, unknown>;
  contents: () => Promise<Record<string, unknown>>;
}): void {
  const { backend, refusal } = setup;
  const refused = async (checkMessage: boolean) => {
    const error = await rejectionOf(refusal.send(setup.session()));
    expect(error.name).toBe(refusal.name);
    if (checkMessage) expect(error.message).toMatch(refusal.message);
    expect(await setup.contents()).toEqual(setup.before());
  };
  if (refusal.motoGap !== undefined) {
    itUnlessMoto(backend, refusal.motoGap)(`refuses ${refusal.title}`, () => refused(true));
  } else if (refusal.motoMessageGap !== undefined) {
    it(`refuses ${refusal.title} with ${refusal.name}`, () => refused(false));
    itUnlessMoto(backend, refusal.motoMessageGap)(`refuses ${refusal.title} with DynamoDB's message`, () =>
      refused(true),
    );
  } else {
    it(`refuses ${refusal.title}`, () => refused(true));
  }
}
