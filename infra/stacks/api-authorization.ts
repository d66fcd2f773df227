import { Annotations, Token } from 'aws-cdk-lib';
import * as apigateway from 'aws-cdk-lib/aws-apigateway';
import * as cognito from 'aws-cdk-lib/aws-cognito';
import type { Construct } from 'constructs';

/** How the business routes of a REST API authorise a caller. */
export const ApiAuthorizationKind = {
  /** SigV4-signed requests from an IAM principal allowed `execute-api:Invoke` (AWS_IAM). */
  IAM: 'IAM',
  /** A Cognito user pool's ID or access token (COGNITO_USER_POOLS); REST APIs have no generic JWT authorizer. */
  COGNITO_USER_POOLS: 'COGNITO_USER_POOLS',
  /** A Lambda (token or request) authorizer of the caller's own (CUSTOM). */
  LAMBDA_AUTHORIZER: 'LAMBDA_AUTHORIZER',
  /** No authorisation at all: anyone who knows the URL calls the routes. For a short-lived demo only. */
  OPEN_FOR_DEMO: 'OPEN_FOR_DEMO',
} as const;

/** One of the {@link ApiAuthorizationKind} values. */
export type ApiAuthorizationKind = (typeof ApiAuthorizationKind)[keyof typeof ApiAuthorizationKind];

/** The authorisation of a REST API's business routes; build one with {@link ApiAuthorization}. */
export type ApiAuthorization =
  | { readonly kind: typeof ApiAuthorizationKind.IAM }
  | {
      readonly kind: typeof ApiAuthorizationKind.COGNITO_USER_POOLS;
      /** ARNs of the user pools whose tokens are accepted (at least one). */
      readonly userPoolArns: readonly string[];
      /** OAuth scopes an access token must carry; without them an ID token is expected. */
      readonly scopes?: readonly string[];
    }
  | {
      readonly kind: typeof ApiAuthorizationKind.LAMBDA_AUTHORIZER;
      /**
       * Builds the authorizer in the API's stack (an authorizer belongs to one REST API, so it cannot be made
       * before the stack that makes the API).
       */
      readonly authorizer: (scope: Construct) => apigateway.IAuthorizer;
    }
  | { readonly kind: typeof ApiAuthorizationKind.OPEN_FOR_DEMO };

/**
 * The choices of {@link ApiAuthorization}.
 * @example
 * new OutboxExampleStack(app, 'OutboxExample', {
 *   apiAuthorization: ApiAuthorization.cognitoUserPools({ userPoolArns: [userPoolArn] }),
 * });
 */
export const ApiAuthorization = {
  /** AWS_IAM on every route: callers sign with SigV4 and need `execute-api:Invoke` (the default). */
  iam: (): ApiAuthorization => ({ kind: ApiAuthorizationKind.IAM }),
  /** A Cognito user pools authorizer over the given pools, optionally requiring OAuth scopes. */
  cognitoUserPools: (options: {
    readonly userPoolArns: readonly string[];
    readonly scopes?: readonly string[];
  }): ApiAuthorization => ({ kind: ApiAuthorizationKind.COGNITO_USER_POOLS, ...options }),
  /**
   * A Lambda authorizer built in the API's stack.
   * @example
   * ApiAuthorization.lambdaAuthorizer((scope) => new apigateway.TokenAuthorizer(scope, 'Tokens', { handler }));
   */
  lambdaAuthorizer: (authorizer: (scope: Construct) => apigateway.IAuthorizer): ApiAuthorization => ({
    kind: ApiAuthorizationKind.LAMBDA_AUTHORIZER,
    authorizer,
  }),
  /** No authorisation; synthesizes with a warning that the API is open to anyone. */
  openForDemo: (): ApiAuthorization => ({ kind: ApiAuthorizationKind.OPEN_FOR_DEMO }),
} as const;

/** The id of the warning an open API synthesizes with. */
export const OPEN_API_WARNING = 'serverless-outbox:openApi';

/** A Cognito user pool ARN: `arn:<partition>:cognito-idp:<region>:<account>:userpool/<id>`. */
const USER_POOL_ARN = /^arn:aws[a-z-]*:cognito-idp:[a-z0-9-]+:\d{12}:userpool\/[\w-]+$/;

/**
 * The method options that give a route of `api` the chosen authorisation, made in `scope`: an authorizer for
 * Cognito or a Lambda, nothing but a warning annotation for an open demo. A choice that cannot work (no user
 * pool, a malformed ARN, a Lambda authorizer that is not CUSTOM) fails `cdk synth` with a message naming it.
 */
export function methodAuthorization(
  scope: Construct,
  authorization: ApiAuthorization,
): Pick<apigateway.MethodOptions, 'authorizationType' | 'authorizer' | 'authorizationScopes'> {
  const fail = (problem: string) => {
    scope.node.addValidation({ validate: () => [`apiAuthorization: ${problem}`] });
  };
  switch (authorization.kind) {
    case ApiAuthorizationKind.IAM:
      return { authorizationType: apigateway.AuthorizationType.IAM };
    case ApiAuthorizationKind.COGNITO_USER_POOLS: {
      const { userPoolArns, scopes } = authorization;
      if (userPoolArns.length === 0) fail('cognitoUserPools needs at least one user pool ARN');
      const malformed = userPoolArns.filter((arn) => !Token.isUnresolved(arn) && !USER_POOL_ARN.test(arn));
      if (malformed.length > 0) {
        fail(`cognitoUserPools: not a Cognito user pool ARN: ${malformed.join(', ')}`);
      }
      if (scopes?.length === 0) fail('cognitoUserPools: scopes is empty; omit it to accept ID tokens');
      const authorizer = new apigateway.CognitoUserPoolsAuthorizer(scope, 'UserPoolsAuthorizer', {
        cognitoUserPools: userPoolArns.map((arn, index) =>
          cognito.UserPool.fromUserPoolArn(scope, `UserPool${index}`, arn),
        ),
      });
      return {
        authorizationType: apigateway.AuthorizationType.COGNITO,
        authorizer,
        ...(scopes === undefined ? {} : { authorizationScopes: [...scopes] }),
      };
    }
    case ApiAuthorizationKind.LAMBDA_AUTHORIZER: {
      const authorizer = authorization.authorizer(scope);
      if (authorizer.authorizationType !== apigateway.AuthorizationType.CUSTOM) {
        fail(
          `lambdaAuthorizer must build a Lambda (token or request) authorizer, of type CUSTOM; it built one ` +
            `of type ${String(authorizer.authorizationType)} (use iam() or cognitoUserPools() for those)`,
        );
        return { authorizationType: apigateway.AuthorizationType.CUSTOM };
      }
      return { authorizationType: apigateway.AuthorizationType.CUSTOM, authorizer };
    }
    case ApiAuthorizationKind.OPEN_FOR_DEMO:
      Annotations.of(scope).addWarningV2(
        OPEN_API_WARNING,
        'apiAuthorization is openForDemo: the REST API is open to anyone who has its URL (orders and ' +
          'inventory routes have AuthorizationType NONE). Deploy it only for a short demo; /admin stays AWS_IAM.',
      );
      return { authorizationType: apigateway.AuthorizationType.NONE };
  }
}
