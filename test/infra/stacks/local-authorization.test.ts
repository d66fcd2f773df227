/**
 * `npm start` serves the example's routes without checking their authorisation: the routes it prints must say
 * so for every route whose template method requires it, as read from the synthesized example.
 */
import { beforeAll, describe, expect, it } from 'vitest';
import { describeRoutes } from '../../../infra/dev/local/host/start.ts';
import type { CloudFormationTemplate } from '../../../infra/dev/local/template/cloudformation-template.ts';
import { readApp } from '../../../infra/dev/local/template/read-app.ts';
import type { RouteDefinition } from '../../../infra/dev/local/template/read-routes.ts';
import { synthSingleQueueTemplate } from '../../support/single-queue-example.ts';
import { SYNTH_TIMEOUT_MS } from '../template-queries.ts';

let routes: readonly RouteDefinition[];

beforeAll(() => {
  routes = readApp(synthSingleQueueTemplate() as unknown as CloudFormationTemplate).routes;
}, SYNTH_TIMEOUT_MS);

describe('the routes npm start prints for the example', () => {
  it('reads every route of the example as AWS_IAM', () => {
    expect(routes.map((route) => `${route.method} ${route.path} ${route.authorization}`).sort()).toEqual([
      'GET /admin/{proxy+} AWS_IAM',
      'GET /inventory/{sku} AWS_IAM',
      'GET /orders/{orderId} AWS_IAM',
      'POST /admin/{proxy+} AWS_IAM',
      'POST /orders AWS_IAM',
      'POST /orders/{orderId}/cancel AWS_IAM',
      'PUT /inventory/{sku} AWS_IAM',
    ]);
  });

  it('marks every route as not enforced locally and says how to call them on AWS', () => {
    const lines = describeRoutes(routes);
    const routeLines = lines.slice(0, routes.length);
    for (const line of routeLines) expect(line).toMatch(/→ .+ {2}\[AWS_IAM: not enforced locally\]$/);
    expect(routeLines.find((line) => line.startsWith('POST   /orders → CreateOrder'))).toBeDefined();
    expect(
      routeLines.find((line) => line.startsWith('POST   /orders/{orderId}/cancel → CancelOrder')),
    ).toBeDefined();
    expect(lines.at(-1)).toBe(
      'AWS_IAM authorisation is not enforced locally: the marked routes answer any request here, and refuse ' +
        'unauthorised ones on AWS (sign a request there with `npx outbox call <METHOD> <path>`)',
    );
  });
});

describe('describeRoutes', () => {
  it('marks only the routes that require authorisation, and names each kind once', () => {
    const lines = describeRoutes([
      { method: 'GET', path: '/open', functionName: 'Open' },
      { method: 'POST', path: '/users', functionName: 'Users', authorization: 'COGNITO_USER_POOLS' },
      { method: 'GET', path: '/users', functionName: 'Users', authorization: 'COGNITO_USER_POOLS' },
      { method: 'GET', path: '/custom', functionName: 'Custom', authorization: 'CUSTOM' },
    ]);
    expect(lines).toEqual([
      'GET    /open → Open',
      'POST   /users → Users  [COGNITO_USER_POOLS: not enforced locally]',
      'GET    /users → Users  [COGNITO_USER_POOLS: not enforced locally]',
      'GET    /custom → Custom  [CUSTOM: not enforced locally]',
      'COGNITO_USER_POOLS, CUSTOM authorisation is not enforced locally: the marked routes answer any request ' +
        'here, and refuse unauthorised ones on AWS',
    ]);
  });

  it('adds no note when every route is open', () => {
    expect(describeRoutes([{ method: 'GET', path: '/open', functionName: 'Open' }])).toEqual([
      'GET    /open → Open',
    ]);
  });
});
