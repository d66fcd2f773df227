import { DynamoDBClient, GetItemCommand, PutItemCommand } from '@aws-sdk/client-dynamodb';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { deployStack } from '../../infra/dev/local/backends/cloudformation-deploy.ts';
import { emulatorClientConfig } from '../../infra/dev/local/backends/emulator-config.ts';
import { type MotoServer, startMotoServer } from '../../infra/dev/local/backends/moto-server.ts';
import {
  asTemplate,
  type CloudFormationTemplate,
  type TemplateResource,
} from '../../infra/dev/local/template/cloudformation-template.ts';
import { describeOnMoto, TEST_BACKEND } from '../integration/support/backend.ts';
import { synthNotesTemplate } from './fixtures/notes-app/notes-stack.ts';

/** Why this file runs only on moto. */
const NEEDS_MOTO =
  "it deploys through CloudFormation's CreateStack and UpdateStack, which among the local backends only moto serves (the embedded backend deploys a template itself)";

let moto: MotoServer;
let dynamodb: DynamoDBClient;
let template: CloudFormationTemplate;

beforeAll(async () => {
  if (TEST_BACKEND !== 'moto') return;
  template = asTemplate(synthNotesTemplate());
  moto = await startMotoServer();
  dynamodb = new DynamoDBClient(emulatorClientConfig(moto.endpoint));
});

afterAll(async () => {
  dynamodb?.destroy();
  await moto?.stop();
});

/** `base` with the resource of construct `name` (its logical id: the name and a hash) changed by `change`. */
function withResource(
  base: CloudFormationTemplate,
  name: string,
  change: (resource: TemplateResource) => TemplateResource,
): CloudFormationTemplate {
  const ownId = new RegExp(`^${name}[0-9A-F]{8}$`);
  const [id, resource] = Object.entries(base.Resources).find(([logicalId]) => ownId.test(logicalId)) ?? [];
  if (id === undefined || resource === undefined) throw new Error(`no resource ${name}`);
  return { ...base, Resources: { ...base.Resources, [id]: change(resource) } };
}

function physicalIdOf(stack: Awaited<ReturnType<typeof deployStack>>, prefix: string): string {
  const resource = [...stack.resources.values()].find((candidate) => candidate.logicalId.startsWith(prefix));
  return resource?.physicalId ?? '';
}

async function noteExists(table: string, noteId: string): Promise<boolean> {
  const { Item } = await dynamodb.send(
    new GetItemCommand({ TableName: table, Key: { noteId: { S: noteId } } }),
  );
  return Item !== undefined;
}

describeOnMoto(NEEDS_MOTO)('deployStack', () => {
  const stackName = 'NotesApp-local';
  let table: string;

  it('creates the stack and reports its resources, outputs, region and account', async () => {
    const stack = await deployStack({ endpoint: moto.endpoint, template, stackName });
    expect(stack).toMatchObject({
      stackName,
      change: 'created',
      region: 'us-east-1',
      accountId: '123456789012',
    });
    table = physicalIdOf(stack, 'Notes');
    expect(table).toMatch(/^NotesApp-local-Notes/);
    expect(physicalIdOf(stack, 'AuditQueue')).toMatch(/^https?:\/\/.*NotesApp-local-AuditQueue/);
    expect(Object.keys(stack.outputs)).toEqual([expect.stringMatching(/^ApiEndpoint/)]);
    await dynamodb.send(new PutItemCommand({ TableName: table, Item: { noteId: { S: 'kept' } } }));
  });

  it('keeps the stack and its data when the template is unchanged, or changed only in code or in environment values built from intrinsics', async () => {
    const recoded = withResource(template, 'Writer', (resource) => ({
      ...resource,
      Properties: {
        ...resource.Properties,
        Environment: {
          Variables: {
            ...(resource.Properties?.Environment as { Variables?: Record<string, unknown> } | undefined)
              ?.Variables,
            REGION_LABEL: { 'Fn::Join': ['-', ['notes', { Ref: 'AWS::Region' }]] },
          },
        },
        Code: { ZipFile: 'x' },
      },
      Metadata: { ...resource.Metadata, 'aws:asset:hash': 'changed' },
    }));
    for (const next of [template, recoded]) {
      const stack = await deployStack({ endpoint: moto.endpoint, template: next, stackName });
      expect(stack.change).toBe('unchanged');
      expect(physicalIdOf(stack, 'Notes')).toBe(table);
    }
    expect(await noteExists(table, 'kept')).toBe(true);
  });

  it('updates the stack in place when a resource changed, keeping the data', async () => {
    const changed = withResource(
      { ...template, Resources: { ...template.Resources, Extra: { Type: 'AWS::SQS::Queue' } } },
      'Writer',
      (resource) => ({ ...resource, Properties: { ...resource.Properties, Timeout: 9 } }),
    );
    const stack = await deployStack({ endpoint: moto.endpoint, template: changed, stackName });
    expect(stack.change).toBe('updated');
    expect(physicalIdOf(stack, 'Extra')).toMatch(/NotesApp-local-Extra/);
    expect(physicalIdOf(stack, 'Notes')).toBe(table);
    expect(await noteExists(table, 'kept')).toBe(true);
  });

  it('keeps using a table the emulator could not update in place, and says so', async () => {
    const lines: string[] = [];
    const changed = withResource(template, 'Notes', (resource) => ({
      ...resource,
      Properties: { ...resource.Properties, StreamSpecification: { StreamViewType: 'NEW_AND_OLD_IMAGES' } },
    }));
    const stack = await deployStack({
      endpoint: moto.endpoint,
      template: changed,
      stackName,
      log: (line) => lines.push(line),
    });
    expect(stack.change).toBe('updated');
    expect(physicalIdOf(stack, 'Notes')).toBe(table);
    expect(await noteExists(table, 'kept')).toBe(true);
    expect(lines.join('\n')).toMatch(/did not update Notes\w+ \(AWS::DynamoDB::Table\) in place/);
  });
});
