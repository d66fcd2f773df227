/**
 * Template metadata that tells operator tools what each resource of an outbox is. A tool reads a stack's
 * template (GetTemplate) and its physical ids (ListStackResources) and finds the outbox table, the queues and
 * the functions by role — never by names, which CloudFormation generates.
 */
import { CfnResource } from 'aws-cdk-lib';
import type { IConstruct } from 'constructs';
import {
  OUTBOX_NAME_METADATA,
  OUTBOX_ROLE_METADATA,
  OUTBOX_SOURCE_METADATA,
  OUTBOX_SUBSCRIBER_METADATA,
  OUTBOX_TOPICS_METADATA,
  type OutboxResourceRole,
} from '../../shared/observability/resource-roles.ts';

export {
  OUTBOX_NAME_METADATA,
  OUTBOX_ROLE_METADATA,
  OUTBOX_SOURCE_METADATA,
  OUTBOX_SUBSCRIBER_METADATA,
  OUTBOX_TOPICS_METADATA,
  OutboxResourceRole,
} from '../../shared/observability/resource-roles.ts';

/** What else a role's metadata says: the topics of a queue or inbox, the source queue of a dead-letter queue. */
export interface OutboxRoleDetails {
  /** The topics a topic queue or an inbox table carries. */
  readonly topics?: readonly string[];
  /** The topic queue whose dead letters a dead-letter queue holds. */
  readonly source?: IConstruct;
  /** The subscriber a queue, dead-letter queue, inbox table or consumer of a subscriber's stack belongs to. */
  readonly subscriber?: string | undefined;
  /** The producer's outbox a subscriber's queue receives from (its name). */
  readonly outboxName?: string;
}

/**
 * Records `role` (and its details) in the template metadata of `construct`'s CloudFormation resource (its
 * default child, or itself when it is one).
 * @example
 * markOutboxRole(outbox.table, OutboxResourceRole.OUTBOX_TABLE);
 */
export function markOutboxRole(
  construct: IConstruct,
  role: OutboxResourceRole,
  details: OutboxRoleDetails = {},
): void {
  const resource = cfnResourceOf(construct);
  resource.addMetadata(OUTBOX_ROLE_METADATA, role);
  if (details.topics !== undefined) resource.addMetadata(OUTBOX_TOPICS_METADATA, [...details.topics]);
  if (details.source !== undefined) {
    resource.addMetadata(OUTBOX_SOURCE_METADATA, cfnResourceOf(details.source).logicalId);
  }
  if (details.subscriber !== undefined) resource.addMetadata(OUTBOX_SUBSCRIBER_METADATA, details.subscriber);
  if (details.outboxName !== undefined) resource.addMetadata(OUTBOX_NAME_METADATA, details.outboxName);
}

/** The CloudFormation resource a construct stands for. */
function cfnResourceOf(construct: IConstruct): CfnResource {
  const resource = construct.node.defaultChild ?? construct;
  if (!CfnResource.isCfnResource(resource)) {
    throw new Error(`${construct.node.path} has no CloudFormation resource to mark`);
  }
  return resource;
}
