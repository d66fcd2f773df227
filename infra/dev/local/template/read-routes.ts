/**
 * Reads the REST API routes: each AWS::ApiGateway::Method with a Lambda proxy integration, its path built from
 * the AWS::ApiGateway::Resource chain (`ParentId`, `PathPart`) up to the API's root resource.
 */
import {
  type CloudFormationTemplate,
  isRecord,
  ResourceType,
  referencedLogicalId,
  resourcesOfType,
} from './cloudformation-template.ts';
import { firstTargetFunction } from './function-target.ts';
import { localName } from './resource-names.ts';
import type { SkippedResource } from './skipped-resource.ts';

/** One route of the local REST API. */
export interface RouteDefinition {
  /** `GET`, `POST`…, or `ANY`. */
  readonly method: string;
  /** API Gateway path template, e.g. `/orders/{orderId}` or `/files/{path+}`. */
  readonly path: string;
  /** Local name of the function behind it. */
  readonly functionName: string;
  /**
   * The method's `AuthorizationType` when it is not `NONE` (`AWS_IAM`, `COGNITO_USER_POOLS`, `CUSTOM`). The
   * local API does not enforce it; it tells the handler who calls as a local user instead.
   */
  readonly authorization?: string;
}

/** Every Lambda proxy route whose function the runtime runs; other methods come back as skipped. */
export function readRoutes(
  template: CloudFormationTemplate,
  functionIds: ReadonlyMap<string, string>,
): { readonly routes: RouteDefinition[]; readonly skipped: SkippedResource[] } {
  const routes: RouteDefinition[] = [];
  const skipped: SkippedResource[] = [];
  for (const [logicalId, resource] of resourcesOfType(template, ResourceType.API_METHOD)) {
    const properties = resource.Properties ?? {};
    const method = typeof properties.HttpMethod === 'string' ? properties.HttpMethod.toUpperCase() : '';
    const path = pathOf(properties.ResourceId, template);
    const integration = isRecord(properties.Integration) ? properties.Integration : {};
    const skip = (reason: string): void => {
      skipped.push({ name: localName(logicalId, resource), type: resource.Type, reason });
    };
    if (path === undefined || method === '') {
      skip('its resource path cannot be read from the template');
      continue;
    }
    if (integration.Type !== 'AWS_PROXY') {
      skip(
        `${method} ${path}: a ${String(integration.Type)} integration is not served locally (only Lambda proxy)`,
      );
      continue;
    }
    const functionName = firstTargetFunction(integration.Uri, template, functionIds);
    if (functionName === undefined) {
      skip(`${method} ${path}: its integration is not a function the runtime runs`);
      continue;
    }
    const authorization =
      typeof properties.AuthorizationType === 'string' ? properties.AuthorizationType.toUpperCase() : 'NONE';
    routes.push({ method, path, functionName, ...(authorization === 'NONE' ? {} : { authorization }) });
  }
  return { routes, skipped };
}

/**
 * The path of an API resource id: `Fn::GetAtt [api, RootResourceId]` is `/`; `Ref` of an
 * AWS::ApiGateway::Resource is its parent's path plus its `PathPart`.
 */
function pathOf(resourceId: unknown, template: CloudFormationTemplate, depth = 0): string | undefined {
  if (referencedLogicalId(resourceId, 'RootResourceId') !== undefined) return '/';
  const id = referencedLogicalId(resourceId);
  const resource = id === undefined ? undefined : template.Resources[id];
  // API Gateway nests at most a few dozen levels; the bound only stops a cyclic template.
  if (resource?.Type !== ResourceType.API_RESOURCE || depth > 100) return undefined;
  const part = resource.Properties?.PathPart;
  const parent = pathOf(resource.Properties?.ParentId, template, depth + 1);
  if (typeof part !== 'string' || parent === undefined) return undefined;
  return `${parent === '/' ? '' : parent}/${part}`;
}
