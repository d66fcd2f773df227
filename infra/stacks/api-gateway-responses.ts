import * as apigateway from 'aws-cdk-lib/aws-apigateway';

/**
 * API Gateway's own answers (a request it refuses before, or instead of, a handler) as the handlers' error
 * shape: `{error, details}`, and for a client error the gateway's `message`.
 *
 * A gateway response template is plain variable substitution, not VTL: nothing is escaped. Only
 * `$context.error.messageString` may be spliced in, because API Gateway substitutes it already quoted as a
 * JSON string; every other part is fixed text. A server error says nothing more than its fixed text, so no
 * internal error (an integration's or an authorizer's) reaches a caller.
 */
interface GatewayAnswer {
  /** The handlers' `error`: short, fixed text. */
  readonly error: string;
  /** The handlers' `details`, as fixed JSON. @default [] */
  readonly details?: readonly { readonly field: string; readonly problem: string }[];
  /** Add the gateway's own message, which names what was refused (never internal errors). @default false */
  readonly message?: boolean;
  /** The status code; without it each response type keeps its own. */
  readonly statusCode?: string;
}

/** What API Gateway quotes as a JSON string in a gateway response template. */
const QUOTED_MESSAGE = '$context.error.messageString';

/**
 * The answer for each response type. The defaults cover the types not listed (INVALID_API_KEY,
 * RESOURCE_NOT_FOUND and others the example does not use), each with its own status code.
 */
export const GATEWAY_ANSWERS: Readonly<Partial<Record<string, GatewayAnswer>>> = {
  DEFAULT_4XX: { error: 'request refused', message: true },
  DEFAULT_5XX: { error: 'internal error' },
  ACCESS_DENIED: { error: 'forbidden', message: true },
  // API Gateway also answers an unknown path or method with this 403.
  MISSING_AUTHENTICATION_TOKEN: { error: 'missing authentication or unknown route', message: true },
  INVALID_SIGNATURE: { error: 'invalid signature', message: true },
  EXPIRED_TOKEN: { error: 'expired credentials', message: true },
  UNAUTHORIZED: { error: 'unauthorized', message: true },
  THROTTLED: { error: 'too many requests', message: true },
  QUOTA_EXCEEDED: { error: 'quota exceeded', message: true },
  WAF_FILTERED: { error: 'forbidden' },
  REQUEST_TOO_LARGE: { error: 'request too large', message: true },
  UNSUPPORTED_MEDIA_TYPE: { error: 'unsupported media type', message: true },
  // The validator's own text (`$context.error.validationErrorString`) is not quoted and echoes the input, so
  // the answer is fixed; the handlers' validation, which runs for whatever the model lets through, names
  // each field.
  BAD_REQUEST_BODY: {
    error: 'invalid request body',
    details: [{ field: '(body)', problem: 'does not match the request model' }],
    statusCode: '400',
  },
  BAD_REQUEST_PARAMETERS: {
    error: 'invalid request parameters',
    details: [{ field: '(parameters)', problem: 'a required request parameter is missing' }],
    message: true,
    statusCode: '400',
  },
  AUTHORIZER_FAILURE: { error: 'internal error' },
  AUTHORIZER_CONFIGURATION_ERROR: { error: 'internal error' },
  API_CONFIGURATION_ERROR: { error: 'internal error' },
  INTEGRATION_FAILURE: { error: 'internal error' },
  INTEGRATION_TIMEOUT: { error: 'timeout' },
};

/** The template of one answer: fixed JSON text, with the quoted gateway message as `message` when asked. */
export function gatewayResponseTemplate(answer: GatewayAnswer): string {
  const fixed = JSON.stringify({ error: answer.error, details: answer.details ?? [] });
  return answer.message === true ? `${fixed.slice(0, -1)},"message":${QUOTED_MESSAGE}}` : fixed;
}

/**
 * Adds every answer of {@link GATEWAY_ANSWERS} to `api` as a JSON gateway response, with `headers` (for
 * example the CORS origin) on each.
 */
export function addJsonGatewayResponses(
  api: apigateway.RestApi,
  headers: Readonly<Record<string, string>> = {},
): void {
  for (const [type, answer] of Object.entries(GATEWAY_ANSWERS)) {
    if (answer === undefined) continue;
    api.addGatewayResponse(pascalCase(type), {
      type: responseType(type),
      ...(answer.statusCode === undefined ? {} : { statusCode: answer.statusCode }),
      ...(Object.keys(headers).length === 0 ? {} : { responseHeaders: { ...headers } }),
      templates: { 'application/json': gatewayResponseTemplate(answer) },
    });
  }
}

/** CDK's response type of a name (`ResponseType.of` accepts any, which a typo would slip through). */
function responseType(name: string): apigateway.ResponseType {
  const known = (apigateway.ResponseType as unknown as Record<string, unknown>)[name];
  if (!(known instanceof apigateway.ResponseType)) throw new Error(`unknown gateway response type ${name}`);
  return known;
}

/** `BAD_REQUEST_BODY` → `BadRequestBody`, the construct id. */
function pascalCase(name: string): string {
  return name
    .toLowerCase()
    .split('_')
    .map((part) => `${part.charAt(0).toUpperCase()}${part.slice(1)}`)
    .join('');
}
