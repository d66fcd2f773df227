/**
 * Where the local runtime's AWS resources live: a moto server it started, an emulator that was already
 * running (`AWS_ENDPOINT_URL`: moto, LocalStack), or the embedded in-memory backend. Each one deploys the
 * app's template and serves the AWS APIs the handlers and pollers call at `endpoint`.
 */
import type { CloudFormationTemplate } from './emulator-template.ts';

/** Which kind of backend runs the resources. */
export type BackendKind = 'moto' | 'external' | 'embedded';

/** One resource of a deployed stack. */
export interface DeployedResource {
  readonly logicalId: string;
  readonly type: string;
  /** What `Ref` returns: a table's name, a queue's URL, a function's name… */
  readonly physicalId: string;
  /**
   * `Fn::GetAtt` values the backend knows (`Arn`, `StreamArn`…). Optional: the runtime asks the backend's
   * DynamoDB and SQS APIs for the attributes of tables and queues that are not given here.
   */
  readonly attributes?: Readonly<Record<string, string>>;
}

/** A stack as deployed on a backend. */
export interface DeployedStack {
  readonly stackName: string;
  readonly region: string;
  readonly accountId: string;
  /** Logical id → deployed resource. */
  readonly resources: ReadonlyMap<string, DeployedResource>;
  /** Output name → value. */
  readonly outputs: Readonly<Record<string, string>>;
  /** The stack's ARN (what `AWS::StackId` resolves to), when the backend has one. */
  readonly stackId?: string;
  /** What this deploy did: created the stack, updated it in place, or found it unchanged and kept it. */
  readonly change?: 'created' | 'updated' | 'unchanged';
}

/** A running backend. */
export interface Backend {
  readonly kind: BackendKind;
  /** The endpoint every SDK client of the handlers and pollers uses (`AWS_ENDPOINT_URL`). */
  readonly endpoint: string;
  /** Process id of a moto server this run started. */
  readonly pid?: number;
  /** The folder the backend keeps its data in (the embedded backend with a data dir). */
  readonly dataLocation?: string;
  /**
   * What saved stream checkpoints are keyed by, when not `endpoint`: the embedded backend's port changes with
   * every start, its data folder does not.
   */
  readonly stateKey?: string;
  /**
   * Creates the stack, or — on an emulator that already has it — updates it in place (keeping it when the
   * template is unchanged), never deleting data. `template` is the app's template as CDK synthesized it
   * (mappings, custom resources and asset code included); each backend takes from it what it can create.
   */
  deploy(template: CloudFormationTemplate, stackName: string): Promise<DeployedStack>;
  /** Stops what this run started (moto, the embedded server); an external emulator is left running. */
  stop(): Promise<void>;
}
