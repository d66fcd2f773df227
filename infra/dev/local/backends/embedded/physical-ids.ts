/**
 * The names and ids CloudFormation gives resources it creates without an explicit name
 * (`<stack>-<LogicalId>-<RANDOM>`, cut to the service's length limit), and the `Ref` / `Fn::GetAtt`
 * values of resources the embedded backend only records (functions, roles, APIs, rules…), so that a template
 * resolves on it the way it does on AWS.
 */
import { randomBytes, randomUUID } from 'node:crypto';

/** Where a resource lives, for its ARN. */
export interface ArnScope {
  readonly region: string;
  readonly accountId: string;
}

/** A recorded resource's `Ref` value and the `Fn::GetAtt` attributes it answers. */
export interface RecordedResource {
  readonly physicalId: string;
  readonly attributes: Readonly<Record<string, string>>;
}

/** Longest generated name per resource type (the service's limit); others get {@link DEFAULT_LIMIT}. */
const NAME_LIMITS: Readonly<Record<string, number>> = {
  'AWS::DynamoDB::Table': 255,
  'AWS::DynamoDB::GlobalTable': 255,
  'AWS::SQS::Queue': 80,
  'AWS::Lambda::Function': 64,
  'AWS::IAM::Role': 64,
  'AWS::IAM::Policy': 128,
  'AWS::IAM::ManagedPolicy': 128,
  'AWS::Events::Rule': 64,
  'AWS::SNS::Topic': 256,
  'AWS::Logs::LogGroup': 512,
  'AWS::StepFunctions::StateMachine': 80,
  'AWS::S3::Bucket': 63,
};
const DEFAULT_LIMIT = 128;

/** The property that names a resource explicitly, per type. */
export const NAME_PROPERTIES: Readonly<Record<string, string>> = {
  'AWS::DynamoDB::Table': 'TableName',
  'AWS::DynamoDB::GlobalTable': 'TableName',
  'AWS::SQS::Queue': 'QueueName',
  'AWS::Lambda::Function': 'FunctionName',
  'AWS::IAM::Role': 'RoleName',
  'AWS::IAM::Policy': 'PolicyName',
  'AWS::IAM::ManagedPolicy': 'ManagedPolicyName',
  'AWS::Events::Rule': 'Name',
  'AWS::SNS::Topic': 'TopicName',
  'AWS::Logs::LogGroup': 'LogGroupName',
  'AWS::StepFunctions::StateMachine': 'StateMachineName',
  'AWS::ApiGateway::Stage': 'StageName',
  'AWS::S3::Bucket': 'BucketName',
};

/**
 * A name like CloudFormation generates: `<stack>-<LogicalId>-<13 random upper-case letters and digits>`,
 * the first part cut so the whole fits the type's limit (`suffix`, e.g. `.fifo`, included).
 * @example
 * generatedName({ stackName: 'App-local', logicalId: 'OrdersTable1A2B', type: 'AWS::DynamoDB::Table' });
 * // 'App-local-OrdersTable1A2B-0K3QZ8W1N7D2X'
 */
export function generatedName(resource: {
  readonly stackName: string;
  readonly logicalId: string;
  readonly type: string;
  readonly suffix?: string;
}): string {
  const random = randomText(13);
  const suffix = resource.suffix ?? '';
  const limit = (NAME_LIMITS[resource.type] ?? DEFAULT_LIMIT) - random.length - 1 - suffix.length;
  return `${`${resource.stackName}-${resource.logicalId}`.slice(0, limit)}-${random}${suffix}`;
}

/**
 * The `Ref` and attributes of a resource the embedded backend records without creating anything: what
 * CloudFormation would return for it. `name` is its explicit name property, when it has one.
 */
export function recordedResource(
  resource: {
    readonly stackName: string;
    readonly logicalId: string;
    readonly type: string;
    readonly name?: string;
  },
  scope: ArnScope,
): RecordedResource {
  const { type } = resource;
  const name = resource.name ?? generatedName(resource);
  const arn = (service: string, path: string): string =>
    `arn:aws:${service}:${scope.region}:${scope.accountId}:${path}`;
  switch (type) {
    case 'AWS::Lambda::Function':
      return { physicalId: name, attributes: { Arn: arn('lambda', `function:${name}`) } };
    case 'AWS::IAM::Role':
      return {
        physicalId: name,
        attributes: { Arn: `arn:aws:iam::${scope.accountId}:role/${name}`, RoleId: `AROA${randomText(17)}` },
      };
    case 'AWS::IAM::ManagedPolicy': {
      const policyArn = `arn:aws:iam::${scope.accountId}:policy/${name}`;
      return { physicalId: policyArn, attributes: { PolicyArn: policyArn } };
    }
    case 'AWS::Events::Rule':
      return { physicalId: name, attributes: { Arn: arn('events', `rule/${name}`) } };
    case 'AWS::SNS::Topic': {
      const topicArn = arn('sns', name);
      return { physicalId: topicArn, attributes: { TopicArn: topicArn, TopicName: name } };
    }
    case 'AWS::Logs::LogGroup':
      return { physicalId: name, attributes: { Arn: arn('logs', `log-group:${name}:*`) } };
    case 'AWS::StepFunctions::StateMachine': {
      const machineArn = arn('states', `stateMachine:${name}`);
      return { physicalId: machineArn, attributes: { Arn: machineArn, Name: name } };
    }
    case 'AWS::ApiGateway::RestApi':
      return { physicalId: randomId(10), attributes: { RootResourceId: randomId(10) } };
    case 'AWS::ApiGateway::Resource':
      return { physicalId: randomId(6), attributes: { ResourceId: randomId(6) } };
    case 'AWS::ApiGateway::Stage':
      return { physicalId: resource.name ?? 'prod', attributes: {} };
    case 'AWS::ApiGateway::Deployment':
    case 'AWS::ApiGateway::Method':
    case 'AWS::ApiGateway::Model':
    case 'AWS::ApiGateway::RequestValidator':
    case 'AWS::ApiGateway::GatewayResponse':
      return { physicalId: randomId(6), attributes: {} };
    case 'AWS::Lambda::EventSourceMapping':
      return { physicalId: randomUUID(), attributes: {} };
    case 'AWS::S3::Bucket': {
      // Bucket names are lower case (CloudFormation lowers the stack and logical id it builds them from).
      const bucket = resource.name ?? generatedName(resource).toLowerCase();
      return {
        physicalId: bucket,
        attributes: {
          Arn: `arn:aws:s3:::${bucket}`,
          DomainName: `${bucket}.s3.amazonaws.com`,
          RegionalDomainName: `${bucket}.s3.${scope.region}.amazonaws.com`,
        },
      };
    }
    default:
      return {
        physicalId: name,
        attributes: { Arn: arn(serviceOf(type), `${resourceKindOf(type)}/${name}`) },
      };
  }
}

/** `AWS::Lambda::Permission` → `lambda`. */
function serviceOf(type: string): string {
  return (type.split('::')[1] ?? 'cloudformation').toLowerCase();
}

/** `AWS::Lambda::Permission` → `permission`. */
function resourceKindOf(type: string): string {
  return (type.split('::')[2] ?? 'resource').toLowerCase();
}

const UPPER_ALPHANUMERIC = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789';
const LOWER_ALPHANUMERIC = 'abcdefghijklmnopqrstuvwxyz0123456789';

function randomText(length: number): string {
  return pick(UPPER_ALPHANUMERIC, length);
}

function randomId(length: number): string {
  return pick(LOWER_ALPHANUMERIC, length);
}

function pick(alphabet: string, length: number): string {
  return [...randomBytes(length)].map((byte) => alphabet[byte % alphabet.length]).join('');
}
