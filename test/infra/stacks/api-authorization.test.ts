/**
 * The example services' authorisation and edge choices other than the defaults (which
 * example-stacks.test.ts covers), and the combinations that must fail `cdk synth`.
 */
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { Annotations, Match } from 'aws-cdk-lib/assertions';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import { beforeAll, describe, expect, it } from 'vitest';
import { ApiAuthorization, methodAuthorization } from '../../../infra/stacks/api-authorization.ts';
import { type ApiEdgeProps, apiEdgeRestApiProps } from '../../../infra/stacks/api-edge.ts';
import { cdkJsonContext, createExampleApp } from '../../../infra/stacks/example-app.ts';
import {
  type CfnTemplate,
  environmentOf,
  functionId,
  idsOfType,
  onlyId,
  propertiesOf,
  refTarget,
  SYNTH_TIMEOUT_MS,
  templateOf,
} from '../template-queries.ts';

const USER_POOL_ARN = 'arn:aws:cognito-idp:eu-west-1:123456789012:userpool/eu-west-1_AbCdEf123';
const WEB_ACL_ARN =
  'arn:aws:wafv2:eu-west-1:123456789012:regional/webacl/outbox-edge/a1b2c3d4-5678-90ab-cdef-EXAMPLE11111';
const BUSINESS_ROUTES = [
  'POST /orders',
  'GET /orders/{orderId}',
  'POST /orders/{orderId}/cancel',
  'PUT /inventory/{sku}',
  'GET /inventory/{sku}',
  'GET /loyalty/{customerId}',
];

/** The example's three service stacks with `options`, in an app with cdk.json's context and no bundling. */
function exampleStacks(options: {
  readonly apiAuthorization?: ApiAuthorization;
  readonly apiEdge?: ApiEdgeProps;
}): Stack[] {
  const app = new App({
    context: { ...cdkJsonContext(), 'aws:cdk:enable-path-metadata': true, 'aws:cdk:bundling-stacks': [] },
  });
  const example = createExampleApp(app, options);
  return [example.orders, example.inventory, example.loyalty];
}

/** Every method of every stack's API, by `METHOD /path`: the services' routes do not overlap. */
function allMethods(templates: readonly CfnTemplate[]): Map<string, Readonly<Record<string, unknown>>> {
  return new Map(templates.flatMap((template) => [...methods(template)]));
}

/** Each method's `METHOD /path` with its properties. */
function methods(template: CfnTemplate): Map<string, Readonly<Record<string, unknown>>> {
  const pathOf = (id: string | undefined): string => {
    if (id === undefined || template.Resources[id]?.Type !== 'AWS::ApiGateway::Resource') return '';
    const properties = propertiesOf(template, id);
    return `${pathOf(refTarget(properties.ParentId))}/${String(properties.PathPart)}`;
  };
  return new Map(
    idsOfType(template, 'AWS::ApiGateway::Method').map((id) => {
      const properties = propertiesOf(template, id);
      return [`${String(properties.HttpMethod)} ${pathOf(refTarget(properties.ResourceId))}`, properties];
    }),
  );
}

describe('a Cognito user pools authorizer, with the edge options all set', () => {
  let templates: CfnTemplate[];
  let json: CfnTemplate;

  beforeAll(() => {
    const stacks = exampleStacks({
      apiAuthorization: ApiAuthorization.cognitoUserPools({
        userPoolArns: [USER_POOL_ARN],
        scopes: ['orders/write'],
      }),
      apiEdge: {
        cloudWatchRole: true,
        webAclArn: WEB_ACL_ARN,
        throttlingRateLimit: 5,
        throttlingBurstLimit: 10,
        cors: { allowOrigins: ['https://shop.example.com'] },
      },
    });
    templates = stacks.map(templateOf);
    json = templates[0] as CfnTemplate;
  }, SYNTH_TIMEOUT_MS);

  it('authorises every business route of every service through its COGNITO_USER_POOLS authorizer over the given pool', () => {
    const all = allMethods(templates);
    for (const template of templates) {
      const authorizerId = onlyId(idsOfType(template, 'AWS::ApiGateway::Authorizer'), 'authorizer');
      expect(propertiesOf(template, authorizerId)).toMatchObject({
        Type: 'COGNITO_USER_POOLS',
        ProviderARNs: [USER_POOL_ARN],
        IdentitySource: 'method.request.header.Authorization',
      });
    }
    for (const route of BUSINESS_ROUTES) {
      expect(all.get(route), route).toMatchObject({
        AuthorizationType: 'COGNITO_USER_POOLS',
        AuthorizationScopes: ['orders/write'],
      });
    }
  });

  it('keeps /admin on AWS_IAM, without the authorizer', () => {
    for (const route of ['GET /admin/{proxy+}', 'POST /admin/{proxy+}']) {
      const method = methods(json).get(route);
      expect(method?.AuthorizationType, route).toBe('AWS_IAM');
      expect(method?.AuthorizerId, route).toBeUndefined();
    }
  });

  it('creates the account’s API Gateway CloudWatch role when asked, once: in the order service', () => {
    expect(templates.map((template) => idsOfType(template, 'AWS::ApiGateway::Account').length)).toEqual([
      1, 0, 0,
    ]);
    const accountId = onlyId(idsOfType(json, 'AWS::ApiGateway::Account'), 'API Gateway account');
    const roleId = refTarget(
      (propertiesOf(json, accountId).CloudWatchRoleArn as Record<string, unknown>) ?? {},
    );
    expect(json.Resources[roleId ?? '']?.Type).toBe('AWS::IAM::Role');
  });

  it('puts the web ACL in front of every service’s stage, once the stage exists', () => {
    for (const template of templates) {
      const associationId = onlyId(
        idsOfType(template, 'AWS::WAFv2::WebACLAssociation'),
        'web ACL association',
      );
      const association = template.Resources[associationId];
      const stageId = onlyId(idsOfType(template, 'AWS::ApiGateway::Stage'), 'stage');
      expect(association?.Properties?.WebACLArn).toBe(WEB_ACL_ARN);
      expect(JSON.stringify(association?.Properties?.ResourceArn)).toContain('/stages/');
      expect((association as { DependsOn?: string[] }).DependsOn).toContain(stageId);
    }
  });

  it('throttles every stage at the given rate and burst', () => {
    for (const template of templates) {
      const stage = propertiesOf(template, onlyId(idsOfType(template, 'AWS::ApiGateway::Stage'), 'stage'));
      expect(stage.MethodSettings).toEqual([
        expect.objectContaining({ ThrottlingRateLimit: 5, ThrottlingBurstLimit: 10 }),
      ]);
    }
  });

  it('answers CORS preflight without authorisation, and names the origin on the gateway’s answers', () => {
    const preflight = [...allMethods(templates)].filter(([route]) => route.startsWith('OPTIONS '));
    expect(preflight.map(([route]) => route)).toEqual(
      expect.arrayContaining([
        'OPTIONS /orders',
        'OPTIONS /inventory/{sku}',
        'OPTIONS /loyalty/{customerId}',
      ]),
    );
    for (const [route, method] of preflight) expect(method.AuthorizationType, route).toBe('NONE');
    for (const template of templates) {
      for (const id of idsOfType(template, 'AWS::ApiGateway::GatewayResponse')) {
        expect(propertiesOf(template, id).ResponseParameters).toEqual({
          'gatewayresponse.header.Access-Control-Allow-Origin': "'https://shop.example.com'",
        });
      }
    }
  });

  it('tells the functions behind the routes the origin, so their own answers name it too', () => {
    const [orders, inventory, loyalty] = templates as [CfnTemplate, CfnTemplate, CfnTemplate];
    for (const [template, names] of [
      [orders, ['CreateOrder', 'GetOrder', 'CancelOrder']],
      [inventory, ['PutStock', 'GetStock']],
      [loyalty, ['GetPoints']],
    ] as const) {
      for (const name of names) {
        expect(environmentOf(template, functionId(template, name)).CORS_ALLOW_ORIGIN, name).toBe(
          'https://shop.example.com',
        );
      }
    }
  });
});

describe('a Lambda authorizer', () => {
  let templates: CfnTemplate[];

  beforeAll(() => {
    templates = exampleStacks({
      apiAuthorization: ApiAuthorization.lambdaAuthorizer(
        (scope) =>
          new apigateway.TokenAuthorizer(scope, 'TokenAuthorizer', {
            handler: new lambda.Function(scope, 'CheckToken', {
              runtime: lambda.Runtime.NODEJS_22_X,
              handler: 'index.handler',
              code: lambda.Code.fromInline('exports.handler = async () => ({ principalId: "nobody" });'),
            }),
          }),
      ),
    }).map(templateOf);
  }, SYNTH_TIMEOUT_MS);

  it('authorises every business route through the given TOKEN authorizer (CUSTOM), /admin through IAM', () => {
    for (const template of templates) {
      const authorizerId = onlyId(idsOfType(template, 'AWS::ApiGateway::Authorizer'), 'authorizer');
      expect(propertiesOf(template, authorizerId).Type).toBe('TOKEN');
      for (const [route, method] of methods(template)) {
        if (!BUSINESS_ROUTES.includes(route)) continue;
        expect(method, route).toMatchObject({
          AuthorizationType: 'CUSTOM',
          AuthorizerId: { Ref: authorizerId },
        });
      }
    }
    const all = allMethods(templates);
    for (const route of BUSINESS_ROUTES) expect(all.get(route)?.AuthorizationType, route).toBe('CUSTOM');
    expect(all.get('POST /admin/{proxy+}')?.AuthorizationType).toBe('AWS_IAM');
  });
});

describe('open for a demo', () => {
  let stacks: Stack[];

  beforeAll(() => {
    stacks = exampleStacks({ apiAuthorization: ApiAuthorization.openForDemo() });
    for (const stack of stacks) templateOf(stack);
  }, SYNTH_TIMEOUT_MS);

  it('leaves the business routes at AuthorizationType NONE, /admin at AWS_IAM', () => {
    const all = allMethods(stacks.map(templateOf));
    for (const route of BUSINESS_ROUTES) expect(all.get(route)?.AuthorizationType, route).toBe('NONE');
    expect(all.get('GET /admin/{proxy+}')?.AuthorizationType).toBe('AWS_IAM');
  });

  it('synthesizes each service with a warning that its API is open to anyone', () => {
    for (const stack of stacks) {
      const warnings = Annotations.fromStack(stack).findWarning(
        '*',
        Match.stringLikeRegexp('the REST API is open to anyone'),
      );
      expect(warnings, stack.stackName).toHaveLength(1);
    }
  });

  it('warns of nothing like it by default', () => {
    for (const secured of exampleStacks({})) {
      templateOf(secured);
      expect(
        Annotations.fromStack(secured).findWarning('*', Match.stringLikeRegexp('open to anyone')),
      ).toEqual([]);
    }
  });
});

describe('edge settings given as cdk context', () => {
  it('creates the account’s CloudWatch role and the web ACL association from -c apiCloudWatchRole / apiWebAclArn', () => {
    const app = new App({
      context: {
        ...cdkJsonContext(),
        'aws:cdk:bundling-stacks': [],
        apiCloudWatchRole: 'true',
        apiWebAclArn: WEB_ACL_ARN,
      },
    });
    const example = createExampleApp(app);
    const templates = [example.orders, example.inventory, example.loyalty].map(templateOf);
    expect(templates.map((json) => idsOfType(json, 'AWS::ApiGateway::Account').length)).toEqual([1, 0, 0]);
    for (const json of templates) {
      const association = onlyId(idsOfType(json, 'AWS::WAFv2::WebACLAssociation'), 'web ACL association');
      expect(propertiesOf(json, association).WebACLArn).toBe(WEB_ACL_ARN);
    }
  });

  it('refuses a CloudWatch role setting that is neither true nor false', () => {
    const app = new App({ context: { apiCloudWatchRole: 'yes' } });
    expect(() => createExampleApp(app)).toThrow('context apiCloudWatchRole must be true or false, got yes');
  });
});

describe('combinations that fail cdk synth', () => {
  /** Synthesizes a small API with one route authorised as `authorization` and the edge as `edge`. */
  function synth(options: { readonly authorization?: ApiAuthorization; readonly edge?: ApiEdgeProps }): void {
    const stack = new Stack(new App(), 'Edge');
    const api = new apigateway.RestApi(stack, 'Api', {
      ...apiEdgeRestApiProps(stack, { edge: options.edge ?? {}, removalPolicy: RemovalPolicy.DESTROY }),
    });
    api.root.addMethod(
      'GET',
      new apigateway.MockIntegration(),
      methodAuthorization(stack, options.authorization ?? ApiAuthorization.iam()),
    );
    templateOf(stack);
  }

  it('synthesizes the defaults', () => {
    expect(() => synth({})).not.toThrow();
  });

  it.each<[string, ApiAuthorization, RegExp]>([
    [
      'a Cognito authorizer without a user pool',
      { kind: 'COGNITO_USER_POOLS', userPoolArns: [] },
      /apiAuthorization: cognitoUserPools needs at least one user pool ARN/,
    ],
    [
      'a user pool ARN that is not one',
      { kind: 'COGNITO_USER_POOLS', userPoolArns: ['arn:aws:iam::123456789012:role/pool'] },
      /not a Cognito user pool ARN: arn:aws:iam::123456789012:role\/pool/,
    ],
    [
      'empty scopes',
      { kind: 'COGNITO_USER_POOLS', userPoolArns: [USER_POOL_ARN], scopes: [] },
      /scopes is empty/,
    ],
    [
      'a "Lambda" authorizer that is not CUSTOM',
      {
        kind: 'LAMBDA_AUTHORIZER',
        authorizer: () => ({ authorizerId: 'abc123', authorizationType: apigateway.AuthorizationType.IAM }),
      },
      /lambdaAuthorizer must build a Lambda \(token or request\) authorizer, of type CUSTOM; it built one of type AWS_IAM/,
    ],
  ])('refuses %s', (_name, authorization, message) => {
    expect(() => synth({ authorization })).toThrow(message);
  });

  it.each<[string, ApiEdgeProps, RegExp]>([
    [
      'a CloudFront (global) web ACL',
      { webAclArn: 'arn:aws:wafv2:us-east-1:123456789012:global/webacl/edge/a1b2c3d4' },
      /apiEdge.webAclArn must be a REGIONAL WAFv2 web ACL ARN/,
    ],
    [
      'a rate limit of 0',
      { throttlingRateLimit: 0 },
      /apiEdge.throttlingRateLimit must be .* above 0, got 0/,
    ],
    [
      'a fractional burst',
      { throttlingBurstLimit: 2.5 },
      /apiEdge.throttlingBurstLimit must be a whole number/,
    ],
  ])('refuses %s', (_name, edge, message) => {
    expect(() => synth({ edge })).toThrow(message);
  });
});
