import { describe, expect, it } from 'vitest';
import { mergeApps, qualifyApp } from '../../../infra/dev/local/template/app-of-stacks.ts';
import type { AppDefinition } from '../../../infra/dev/local/template/read-app.ts';
import type { RouteDefinition } from '../../../infra/dev/local/template/read-routes.ts';

/** An app of one function, `Api/Handler`, behind `routes`, with a mapping, a schedule and a skipped resource. */
function app(routes: readonly Omit<RouteDefinition, 'functionName'>[]): AppDefinition {
  return {
    stackName: 'Shop',
    functions: [
      {
        name: 'Api/Handler',
        logicalId: 'ApiHandler1A2B3C4D',
        entry: 'handler.ts',
        handlerExport: 'handler',
        timeoutSeconds: 3,
        memoryMb: 128,
        environment: {},
      },
    ],
    mappings: [
      {
        name: 'Api/Handler/SqsEventSource',
        logicalId: 'Mapping',
        functionName: 'Api/Handler',
        source: { kind: 'queue', arn: 'arn' },
        batchSize: 10,
        maxBatchingWindowSeconds: 0,
        filterPatterns: [],
        bisectBatchOnError: false,
        maxRetryAttempts: -1,
        maxRecordAgeSeconds: -1,
        parallelizationFactor: 1,
        onFailureDestination: undefined,
        reportBatchItemFailures: false,
        startingPosition: undefined,
      },
    ],
    routes: routes.map((route) => ({ ...route, functionName: 'Api/Handler' })),
    schedules: [
      {
        name: 'Tick',
        functionName: 'Api/Handler',
        expression: 'rate(1 minute)',
        rateSeconds: 60,
        input: undefined,
      },
    ],
    skipped: [{ name: 'Api/Authorizer', type: 'AWS::Lambda::Function', reason: 'no entry' }],
  };
}

const template = (outputs: readonly string[]) => ({
  Resources: {},
  Outputs: Object.fromEntries(outputs.map((name) => [name, { Value: 'x' }])),
});

describe('qualifyApp', () => {
  it('prefixes every local name with the stack’s display name', () => {
    const qualified = qualifyApp(app([{ method: 'GET', path: '/shop' }]), 'Shop');
    expect(qualified.functions.map((fn) => fn.name)).toEqual(['Shop/Api/Handler']);
    expect(qualified.mappings.map((mapping) => [mapping.name, mapping.functionName])).toEqual([
      ['Shop/Api/Handler/SqsEventSource', 'Shop/Api/Handler'],
    ]);
    expect(qualified.routes.map((route) => route.functionName)).toEqual(['Shop/Api/Handler']);
    expect(qualified.schedules.map((schedule) => [schedule.name, schedule.functionName])).toEqual([
      ['Shop/Tick', 'Shop/Api/Handler'],
    ]);
    expect(qualified.skipped.map((skipped) => skipped.name)).toEqual(['Shop/Api/Authorizer']);
  });
});

describe('mergeApps', () => {
  it('puts the stacks’ functions, mappings, routes and schedules together, in the order given', () => {
    const merged = mergeApps([
      {
        displayName: 'Shop',
        template: template(['ShopUrl']),
        app: qualifyApp(app([{ method: 'GET', path: '/shop/{id}' }]), 'Shop'),
      },
      {
        displayName: 'Mailroom',
        template: template(['MailroomUrl']),
        // The same path with another method, and a path of the same shape under another literal, do not clash.
        app: qualifyApp(
          app([
            { method: 'POST', path: '/shop/{id}' },
            { method: 'GET', path: '/mail/{id}' },
          ]),
          'Mailroom',
        ),
      },
    ]);
    expect(merged.stackName).toBeUndefined();
    expect(merged.functions.map((fn) => fn.name)).toEqual(['Shop/Api/Handler', 'Mailroom/Api/Handler']);
    expect(merged.routes.map((route) => `${route.method} ${route.path} → ${route.functionName}`)).toEqual([
      'GET /shop/{id} → Shop/Api/Handler',
      'POST /shop/{id} → Mailroom/Api/Handler',
      'GET /mail/{id} → Mailroom/Api/Handler',
    ]);
    expect(merged.mappings).toHaveLength(2);
    expect(merged.schedules).toHaveLength(2);
  });

  it('refuses two stacks declaring one route, however they name its parameters', () => {
    expect(() =>
      mergeApps([
        {
          displayName: 'Shop',
          template: template([]),
          app: qualifyApp(app([{ method: 'GET', path: '/r/{id}' }]), 'Shop'),
        },
        {
          displayName: 'Copy',
          template: template([]),
          app: qualifyApp(app([{ method: 'GET', path: '/r/{receiptId}' }]), 'Copy'),
        },
      ]),
    ).toThrow(
      expect.objectContaining({
        code: 'STACK_CONFLICT',
        message: expect.stringMatching(
          /^stacks Shop and Copy both declare GET \/r\/\{receiptId\} \(→ Shop\/Api\/Handler, → Copy\/Api\/Handler\)/,
        ),
      }),
    );
  });

  it('refuses two stacks with an output of one name', () => {
    expect(() =>
      mergeApps([
        { displayName: 'Shop', template: template(['ApiUrl', 'Only']), app: qualifyApp(app([]), 'Shop') },
        { displayName: 'Copy', template: template(['ApiUrl']), app: qualifyApp(app([]), 'Copy') },
      ]),
    ).toThrow(
      expect.objectContaining({
        code: 'STACK_CONFLICT',
        message: expect.stringMatching(/^stacks Shop and Copy both have an output named ApiUrl;/),
      }),
    );
  });
});
