/**
 * The cdk-nag findings of the example's own resources (its REST API and the functions behind it) that are its
 * design, each with its reason. The outbox acknowledges the findings of what it builds itself; these are the
 * example's, recorded the same way (`Validations.of(construct).acknowledge`, which cdk-nag v3 reads).
 */
import { type Stack, Validations } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as lambda from 'aws-cdk-lib/aws-lambda';
import * as wafv2 from 'aws-cdk-lib/aws-wafv2';
import type { IConstruct } from 'constructs';

/** The example's acknowledged findings, by what they are about. */
export const EXAMPLE_NAG_REASONS = {
  /** On each function behind the API (its role's default policy). */
  xrayAnyResource: {
    id: 'AwsSolutions-IAM5[Resource::*]',
    reason:
      'X-Ray active tracing: xray:PutTraceSegments and xray:PutTelemetryRecords have no resource-level ' +
      'permissions, so IAM only accepts Resource "*" for them. Every other statement names its table, index ' +
      'or bucket.',
  },
  /** On each function behind the API. */
  apiFunctionDlq: {
    id: 'Serverless-LambdaDLQ',
    reason:
      'Invoked synchronously by API Gateway: the caller gets the error as the HTTP answer, and a function DLQ ' +
      'only receives asynchronous invocations.',
  },
  /** On each business method authorised with AWS_IAM (the default `apiAuthorization`). */
  iamAuthorizedMethod: {
    id: 'AwsSolutions-COG4',
    reason:
      'The route is AWS_IAM-authorised: callers sign with SigV4 and need execute-api:Invoke on it, which is ' +
      'how the services and tools that call the example authenticate. apiAuthorization switches the business ' +
      'routes to a Cognito user pool when the callers are end users.',
  },
  /** On the API's stage, when no web ACL is given. */
  stageWithoutWaf: {
    id: 'AwsSolutions-APIG3',
    reason:
      'A web ACL is an option (apiEdge.webAclArn) rather than created here: its rules depend on the traffic a ' +
      'deployment expects, and it has a monthly cost of its own. Without one, every business route still ' +
      'requires authorisation, the request validator checks bodies and path parameters, and the stage is ' +
      'throttled (100 requests per second, 200 burst, by default).',
  },
} as const;

/**
 * Acknowledges the example's by-design findings in `stack`: on the functions directly in it (all behind the
 * API), their roles, the API's IAM-authorised business methods, and its stage when it has no web ACL.
 * @example
 * acknowledgeExampleNagFindings(this, this.api);
 */
export function acknowledgeExampleNagFindings(stack: Stack, api: apigateway.RestApi): void {
  for (const fn of stack.node.children.filter((child) => child instanceof lambda.Function)) {
    acknowledge([fn, fn.role], [EXAMPLE_NAG_REASONS.xrayAnyResource, EXAMPLE_NAG_REASONS.apiFunctionDlq]);
  }
  for (const method of api.methods) {
    // The outbox acknowledges its own /admin methods; an open or Cognito route is not acknowledged here.
    const resource = method.node.defaultChild as apigateway.CfnMethod;
    const isAdmin = method.resource.path.startsWith('/admin');
    if (!isAdmin && resource.authorizationType === apigateway.AuthorizationType.IAM) {
      acknowledge([method], [EXAMPLE_NAG_REASONS.iamAuthorizedMethod]);
    }
  }
  const hasWebAcl = stack.node.findAll().some((construct) => construct instanceof wafv2.CfnWebACLAssociation);
  if (!hasWebAcl) acknowledge([api.deploymentStage], [EXAMPLE_NAG_REASONS.stageWithoutWaf]);
}

function acknowledge(
  scopes: readonly (IConstruct | undefined)[],
  acknowledgements: readonly { id: string; reason: string }[],
): void {
  for (const scope of scopes) {
    if (scope !== undefined) Validations.of(scope).acknowledge(...acknowledgements);
  }
}
