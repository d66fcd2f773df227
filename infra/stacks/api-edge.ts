import { type RemovalPolicy, Token } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as logs from 'aws-cdk-lib/aws-logs';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import type { Construct } from 'constructs';
import { addJsonGatewayResponses } from './api-gateway-responses.ts';

/** Props of the REST API's edge: logging, throttling, WAF and CORS. */
export interface ApiEdgeProps {
  /**
   * Create the account's API Gateway CloudWatch role (`AWS::ApiGateway::Account`), which access and execution
   * logs need. It is one setting per account and region, shared by every API there: turn this on in one
   * stack only, or set it once outside CDK (`aws apigateway update-account`). Without it a stage that logs
   * fails to deploy with "CloudWatch Logs role ARN must be set in account settings".
   * @default false
   */
  readonly cloudWatchRole?: boolean;
  /** How long the access and execution logs are kept. @default one month */
  readonly logRetention?: logs.RetentionDays;
  /**
   * Execution logging of the stage (`ERROR` logs what API Gateway refused or failed on, never a body).
   * @default apigateway.MethodLoggingLevel.ERROR
   */
  readonly executionLogging?: apigateway.MethodLoggingLevel;
  /** Steady-state requests per second across the stage. @default 100 */
  readonly throttlingRateLimit?: number;
  /** Requests the stage takes in a burst above the rate. @default 200 */
  readonly throttlingBurstLimit?: number;
  /**
   * ARN of a regional AWS WAF web ACL to put in front of the stage.
   * @default - no web ACL
   */
  readonly webAclArn?: string;
  /**
   * CORS for browsers: preflight (OPTIONS, unauthenticated, as browsers send it) on every resource and the
   * origin (when it allows one) on the gateway's own error answers and on the handlers' answers.
   * @default - no CORS
   */
  readonly cors?: apigateway.CorsOptions;
}

/** The edge's defaults. */
export const API_EDGE_DEFAULTS = {
  cloudWatchRole: false,
  logRetention: logs.RetentionDays.ONE_MONTH,
  executionLogging: apigateway.MethodLoggingLevel.ERROR,
  throttlingRateLimit: 100,
  throttlingBurstLimit: 200,
  /** The stage (CDK's default name, written out: the execution log group is named after it). */
  stageName: 'prod',
} as const;

/**
 * One JSON object per request in the access log. Access log variables are not escaped, so only values API
 * Gateway sets itself are used and a caller cannot break or forge a line: the user agent and the raw request
 * path, which a caller writes, are left out (`resourcePath` is the route, `/orders/{orderId}`).
 */
export const ACCESS_LOG_FIELDS = {
  requestId: '$context.requestId',
  ip: '$context.identity.sourceIp',
  caller: '$context.identity.caller',
  user: '$context.identity.user',
  userArn: '$context.identity.userArn',
  // Who a Cognito or Lambda authorizer let in: the token's subject, the authorizer's principal.
  cognitoSub: '$context.authorizer.claims.sub',
  principalId: '$context.authorizer.principalId',
  requestTime: '$context.requestTime',
  httpMethod: '$context.httpMethod',
  resourcePath: '$context.resourcePath',
  status: '$context.status',
  protocol: '$context.protocol',
  responseLength: '$context.responseLength',
  responseLatency: '$context.responseLatency',
  integrationLatency: '$context.integrationLatency',
  errorType: '$context.error.responseType',
  wafResponseCode: '$context.wafResponseCode',
} as const;

/** A regional WAFv2 web ACL ARN (a REST API stage takes a REGIONAL one, never a CLOUDFRONT/global one). */
const REGIONAL_WEB_ACL_ARN = /^arn:aws[a-z-]*:wafv2:[a-z0-9-]+:\d{12}:regional\/webacl\/[\w-]+\/[\w-]+$/;

/** The RestApi props of the edge: the CloudWatch role choice, CORS, and the stage's logging and throttling. */
export function apiEdgeRestApiProps(
  scope: Construct,
  options: { readonly edge: ApiEdgeProps; readonly removalPolicy: RemovalPolicy },
): Pick<
  apigateway.RestApiProps,
  'cloudWatchRole' | 'cloudWatchRoleRemovalPolicy' | 'deployOptions' | 'defaultCorsPreflightOptions'
> {
  const { edge, removalPolicy } = options;
  const rateLimit = edge.throttlingRateLimit ?? API_EDGE_DEFAULTS.throttlingRateLimit;
  const burstLimit = edge.throttlingBurstLimit ?? API_EDGE_DEFAULTS.throttlingBurstLimit;
  const problems: string[] = [];
  if (!(Number.isFinite(rateLimit) && rateLimit > 0)) {
    problems.push(
      `apiEdge.throttlingRateLimit must be a number of requests per second above 0, got ${rateLimit}`,
    );
  }
  if (!(Number.isInteger(burstLimit) && burstLimit >= 1)) {
    problems.push(
      `apiEdge.throttlingBurstLimit must be a whole number of requests, 1 or more, got ${burstLimit}`,
    );
  }
  if (edge.webAclArn !== undefined && !Token.isUnresolved(edge.webAclArn)) {
    if (!REGIONAL_WEB_ACL_ARN.test(edge.webAclArn)) {
      problems.push(
        `apiEdge.webAclArn must be a REGIONAL WAFv2 web ACL ARN (arn:aws:wafv2:<region>:<account>:regional/webacl/<name>/<id>); ` +
          `a REST API stage cannot take a CLOUDFRONT (global) one: ${edge.webAclArn}`,
      );
    }
  }
  if (problems.length > 0) scope.node.addValidation({ validate: () => problems });
  const accessLogs = new logs.LogGroup(scope, 'ApiAccessLogs', {
    retention: edge.logRetention ?? API_EDGE_DEFAULTS.logRetention,
    removalPolicy,
  });
  return {
    cloudWatchRole: edge.cloudWatchRole ?? API_EDGE_DEFAULTS.cloudWatchRole,
    ...(edge.cloudWatchRole === true ? { cloudWatchRoleRemovalPolicy: removalPolicy } : {}),
    ...(edge.cors === undefined ? {} : { defaultCorsPreflightOptions: edge.cors }),
    deployOptions: {
      stageName: API_EDGE_DEFAULTS.stageName,
      throttlingRateLimit: rateLimit,
      throttlingBurstLimit: burstLimit,
      // X-Ray on the API too: a request's trace continues through the relay and the consumer.
      tracingEnabled: true,
      accessLogDestination: new apigateway.LogGroupLogDestination(accessLogs),
      accessLogFormat: apigateway.AccessLogFormat.custom(accessLogFormat()),
      loggingLevel: edge.executionLogging ?? API_EDGE_DEFAULTS.executionLogging,
      // Full request and response bodies in the logs would copy customers' data there.
      dataTraceEnabled: false,
    },
  };
}

/**
 * What the edge adds once the API exists: its execution log group with retention (API Gateway would create it
 * kept forever), the JSON gateway responses, and the web ACL association.
 */
export function hardenApiEdge(
  scope: Construct,
  options: {
    readonly api: apigateway.RestApi;
    readonly edge: ApiEdgeProps;
    readonly removalPolicy: RemovalPolicy;
  },
): void {
  const { api, edge, removalPolicy } = options;
  const stage = api.deploymentStage;
  const executionLogs = new logs.LogGroup(scope, 'ApiExecutionLogs', {
    // The stage's name as text: its `stageName` is a reference to the stage, which depends on this group.
    logGroupName: `API-Gateway-Execution-Logs_${api.restApiId}/${API_EDGE_DEFAULTS.stageName}`,
    retention: edge.logRetention ?? API_EDGE_DEFAULTS.logRetention,
    removalPolicy,
  });
  // The group must exist before the stage starts logging, or API Gateway creates it first and this one fails.
  stage.node.addDependency(executionLogs);
  addJsonGatewayResponses(api, corsHeaders(edge.cors));
  if (edge.webAclArn !== undefined) {
    const association = new wafv2.CfnWebACLAssociation(scope, 'ApiWebAcl', {
      resourceArn: stage.stageArn,
      webAclArn: edge.webAclArn,
    });
    // The stage ARN is built from the API id and the stage name, so nothing else orders the two.
    association.node.addDependency(stage);
  }
}

/** The access log line: a JSON object whose values API Gateway fills in. */
function accessLogFormat(): string {
  return JSON.stringify(ACCESS_LOG_FIELDS);
}

/**
 * The CORS header on the gateway's own answers: one allowed origin only (a gateway response cannot choose
 * among several by the request's origin).
 */
function corsHeaders(cors: apigateway.CorsOptions | undefined): Record<string, string> {
  const origin = corsAllowOrigin(cors);
  return origin === undefined ? {} : { 'Access-Control-Allow-Origin': `'${origin}'` };
}

/**
 * The one origin the handlers' answers and the gateway's own name in `access-control-allow-origin`, when CORS
 * allows exactly one (with several, only the preflight can answer per origin).
 */
export function corsAllowOrigin(cors: apigateway.CorsOptions | undefined): string | undefined {
  const [origin, other] = cors?.allowOrigins ?? [];
  return origin === undefined || other !== undefined ? undefined : origin;
}
