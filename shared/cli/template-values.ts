/**
 * The text of a value in a deployed template, as CloudFormation gave it to the resource: literal text, or the
 * intrinsic functions a CDK app writes for a value made of other resources' ids (`Ref`, `Fn::GetAtt`, `Fn::Join`,
 * `Fn::Sub`) and the pseudo parameters, resolved from the stack's resources and its id. Pure.
 */

/** What a template's values are resolved from. */
export interface TemplateContext {
  /** Logical id → physical id (what `Ref` gives: a queue's URL, a table's name). */
  readonly physicalIds: ReadonlyMap<string, string>;
  /** Logical id → resource type, for `Fn::GetAtt`. */
  readonly types: ReadonlyMap<string, string>;
  /** The stack's ARN (DescribeStacks' StackId), which names its partition, region and account. */
  readonly stackId?: string;
  readonly stackName: string;
}

/** What a part that cannot be resolved reads as: the value stays readable as JSON, and names no real resource. */
export const UNRESOLVED = '?';

/**
 * The text `value` resolves to, each part that cannot be resolved (an attribute the tools do not know, a parameter)
 * read as {@link UNRESOLVED}; `undefined` when `value` is neither text nor an intrinsic function of text.
 * @example
 * templateText({ 'Fn::Join': ['', ['{"a":"', { Ref: 'Queue' }, '"}']] }, context); // '{"a":"https://sqs…"}'
 */
export function templateText(value: unknown, context: TemplateContext): string | undefined {
  if (typeof value === 'string') return value;
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  if (!isRecord(value)) return undefined;
  const [name, argument] = Object.entries(value)[0] ?? [];
  if (Object.keys(value).length !== 1 || name === undefined) return undefined;
  switch (name) {
    case 'Ref':
      return typeof argument === 'string' ? refOf(argument, context) : UNRESOLVED;
    case 'Fn::GetAtt':
      return Array.isArray(argument) ? attributeOf(argument, context) : UNRESOLVED;
    case 'Fn::Join': {
      if (!Array.isArray(argument) || typeof argument[0] !== 'string' || !Array.isArray(argument[1])) {
        return UNRESOLVED;
      }
      const [separator, parts] = argument as [string, unknown[]];
      return parts.map((part) => templateText(part, context) ?? UNRESOLVED).join(separator);
    }
    case 'Fn::Sub':
      return substituted(argument, context);
    default:
      return UNRESOLVED;
  }
}

/** What `Ref` gives: a pseudo parameter's value, or the physical id of a resource of the stack. */
function refOf(name: string, context: TemplateContext): string {
  const arn = (context.stackId ?? '').split(':');
  const partition = arn[1];
  const pseudo: Readonly<Record<string, string | undefined>> = {
    'AWS::Partition': partition,
    'AWS::Region': arn[3],
    'AWS::AccountId': arn[4],
    'AWS::URLSuffix':
      partition === undefined ? undefined : partition === 'aws-cn' ? 'amazonaws.com.cn' : 'amazonaws.com',
    'AWS::StackName': context.stackName,
    'AWS::StackId': context.stackId,
  };
  const value = name.startsWith('AWS::') ? pseudo[name] : context.physicalIds.get(name);
  return value === undefined || value === '' ? UNRESOLVED : value;
}

/** The attributes of a queue and a table that the tools read (an SQS queue's physical id is its URL). */
function attributeOf(argument: readonly unknown[], context: TemplateContext): string {
  const [logicalId, attribute] = argument;
  if (typeof logicalId !== 'string' || typeof attribute !== 'string') return UNRESOLVED;
  const physicalId = context.physicalIds.get(logicalId);
  if (physicalId === undefined || physicalId === '') return UNRESOLVED;
  const type = context.types.get(logicalId);
  if (type === 'AWS::SQS::Queue') {
    if (attribute === 'QueueUrl') return physicalId;
    if (attribute === 'QueueName') return physicalId.split('/').at(-1) ?? UNRESOLVED;
  }
  if (type === 'AWS::DynamoDB::Table' && attribute === 'TableName') return physicalId;
  return UNRESOLVED;
}

/** `Fn::Sub`: `${Name}` of a variable, a pseudo parameter, a resource (`Ref`) or `${Id.Attribute}`. */
function substituted(argument: unknown, context: TemplateContext): string {
  const [text, variables] = Array.isArray(argument) ? argument : [argument, {}];
  if (typeof text !== 'string') return UNRESOLVED;
  const given = isRecord(variables) ? variables : {};
  return text.replace(/\$\{([^}]+)\}/g, (whole, name: string) => {
    if (name.startsWith('!')) return whole.replace('!', '');
    if (Object.hasOwn(given, name)) return templateText(given[name], context) ?? UNRESOLVED;
    const dot = name.indexOf('.');
    return dot > 0 && !name.startsWith('AWS::')
      ? attributeOf([name.slice(0, dot), name.slice(dot + 1)], context)
      : refOf(name, context);
  });
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
