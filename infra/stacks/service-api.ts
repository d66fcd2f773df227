/**
 * What each service of the example puts in front of its functions: a REST API of its own with the same edge (logs,
 * throttling, WAF, CORS), the same authorisation of its business routes, request validation of bodies and path
 * parameters, and functions with the example's defaults. Each service stack builds one.
 */
import { fileURLToPath } from 'node:url';
import type { RemovalPolicy, Stack, StackProps } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as dynamodb from 'aws-cdk-lib/aws-dynamodb';
import type * as lambda from 'aws-cdk-lib/aws-lambda';
import type { Construct } from 'constructs';
import { OutboxFunction, TABLE_DEFAULTS } from 'serverless-outbox/cdk';
import { type ApiAuthorization, ApiAuthorizationKind, methodAuthorization } from './api-authorization.ts';
import { type ApiEdgeProps, apiEdgeRestApiProps, corsAllowOrigin, hardenApiEdge } from './api-edge.ts';
import { acknowledgeExampleNagFindings } from './example-nag-suppressions.ts';
import { requestModelSchema } from './request-model-schema.ts';

/** Props every service stack of the example takes. */
export interface ServiceStackProps extends StackProps {
  /**
   * What happens to tables and log groups when they leave the stack.
   * @default RemovalPolicy.DESTROY - an example that `cdk destroy` removes completely
   */
  readonly removalPolicy?: RemovalPolicy;
  /**
   * Who may call the service's business routes. `/admin` is AWS_IAM whatever this says.
   * @default ApiAuthorization.iam() - SigV4-signed requests from principals allowed `execute-api:Invoke`
   */
  readonly apiAuthorization?: ApiAuthorization;
  /**
   * The API's edge: access and execution logs, the account's CloudWatch role, throttling, WAF, CORS.
   * @default - see `API_EDGE_DEFAULTS`: logs kept a month, no CloudWatch role, 100 rps / 200 burst
   */
  readonly apiEdge?: ApiEdgeProps;
}

/** A handler module of the example, by its path under `functions/`. */
export function functionEntry(path: string): string {
  return fileURLToPath(new URL(`../../functions/${path}`, import.meta.url));
}

/** A table of a service's own, keyed by one string attribute, with the example's defaults. */
export function serviceTable(
  scope: Construct,
  id: string,
  options: { partitionKey: string; removalPolicy: RemovalPolicy },
): dynamodb.Table {
  return new dynamodb.Table(scope, id, {
    partitionKey: { name: options.partitionKey, type: dynamodb.AttributeType.STRING },
    billingMode: TABLE_DEFAULTS.billingMode,
    pointInTimeRecoverySpecification: { pointInTimeRecoveryEnabled: TABLE_DEFAULTS.pointInTimeRecovery },
    removalPolicy: options.removalPolicy,
  });
}

/**
 * A service's REST API (named `<stack>-api`; its construct id, which names its `…Endpoint` output, is the
 * service's own so that the outputs of the example's stacks never share a name) and the helpers its routes are
 * added with. Call {@link ServiceApi.harden} once every route is added.
 */
export class ServiceApi {
  /** The REST API. */
  public readonly api: apigateway.RestApi;

  readonly #stack: Stack;
  readonly #edge: ApiEdgeProps;
  readonly #removalPolicy: RemovalPolicy;
  readonly #authorized: Partial<apigateway.MethodOptions>;
  readonly #validator: apigateway.RequestValidator;

  constructor(
    stack: Stack,
    props: ServiceStackProps & {
      /** The API's construct id. @default 'Api' */
      readonly id?: string;
      readonly description: string;
      readonly removalPolicy: RemovalPolicy;
    },
  ) {
    this.#stack = stack;
    this.#edge = props.apiEdge ?? {};
    this.#removalPolicy = props.removalPolicy;
    this.api = new apigateway.RestApi(stack, props.id ?? 'Api', {
      restApiName: `${stack.stackName}-api`,
      description: props.description,
      endpointConfiguration: { types: [apigateway.EndpointType.REGIONAL] },
      ...apiEdgeRestApiProps(stack, { edge: this.#edge, removalPolicy: props.removalPolicy }),
    });
    // Every business route gets the same authorisation, given per method (not as the API's default method
    // options): /admin sets AWS_IAM, which an inherited Cognito or Lambda authorizer would contradict.
    this.#authorized = methodAuthorization(
      stack,
      props.apiAuthorization ?? { kind: ApiAuthorizationKind.IAM },
    );
    this.#validator = this.api.addRequestValidator('RequestValidator', {
      validateRequestBody: true,
      validateRequestParameters: true,
    });
  }

  /**
   * A function of the service behind the API (`entry` under `functions/`), with the example's defaults and, with CORS
   * for one origin, that origin to name on its answers as the gateway does on its own.
   */
  function(id: string, entry: string, environment: Record<string, string>): OutboxFunction {
    const allowOrigin = corsAllowOrigin(this.#edge.cors);
    return new OutboxFunction(this.#stack, id, {
      entry: functionEntry(entry),
      environment: {
        ...environment,
        ...(allowOrigin === undefined ? {} : { CORS_ALLOW_ORIGIN: allowOrigin }),
      },
      logGroupRemovalPolicy: this.#removalPolicy,
    });
  }

  /**
   * Adds `method` on `resource` served by `target`: authorised, its path parameters required and, with `body`, its
   * JSON body validated against the request's schema.
   */
  route(
    resource: apigateway.IResource,
    method: string,
    options: {
      readonly target: lambda.IFunction;
      readonly pathParameters?: readonly string[];
      readonly body?: { readonly name: string; readonly schema: Parameters<typeof requestModelSchema>[0] };
    },
  ): apigateway.Method {
    const { body } = options;
    return resource.addMethod(method, new apigateway.LambdaIntegration(options.target), {
      ...this.#authorized,
      requestValidator: this.#validator,
      ...(options.pathParameters === undefined
        ? {}
        : {
            requestParameters: Object.fromEntries(
              options.pathParameters.map((parameter) => [`method.request.path.${parameter}`, true]),
            ),
          }),
      ...(body === undefined
        ? {}
        : {
            requestModels: {
              'application/json': this.api.addModel(`${body.name}Request`, {
                contentType: 'application/json',
                modelName: `${body.name}Request`,
                schema: requestModelSchema(body.schema),
              }),
            },
          }),
    });
  }

  /**
   * What the edge adds once every route is there — logs with retention, JSON gateway responses that never carry
   * internal errors, the web ACL — and the service's by-design cdk-nag findings, acknowledged with reasons.
   */
  harden(): void {
    hardenApiEdge(this.#stack, { api: this.api, edge: this.#edge, removalPolicy: this.#removalPolicy });
    acknowledgeExampleNagFindings(this.#stack, this.api);
  }
}
