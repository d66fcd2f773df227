import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Stage } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { cdkJsonContext, EXAMPLE_STACK_NAMES } from '../../infra/stacks/example-app.ts';
import { buildExampleApp, type ExampleTemplate, synthExampleTemplates } from '../../infra/synth-template.ts';
import {
  asTemplate,
  CDK_PATH,
  constructName,
  idsOfType,
  resource,
  SYNTH_TIMEOUT_MS,
} from './template-queries.ts';

/** Bundling every handler with esbuild takes a while on a busy machine. */
const BUNDLE_TIMEOUT_MS = 300_000;

let templates: ExampleTemplate[];

beforeAll(() => {
  templates = synthExampleTemplates();
}, SYNTH_TIMEOUT_MS);

const functionCount = () =>
  templates.reduce(
    (count, { template }) => count + idsOfType(asTemplate(template), 'AWS::Lambda::Function').length,
    0,
  );

describe('synthExampleTemplates', () => {
  it('returns the order, inventory and loyalty stacks, in the order they deploy, each with its API', () => {
    expect(templates.map(({ stackName }) => stackName)).toEqual([
      EXAMPLE_STACK_NAMES.orders,
      EXAMPLE_STACK_NAMES.inventory,
      EXAMPLE_STACK_NAMES.loyalty,
    ]);
    const outputs = templates.map(({ template }) => Object.keys(asTemplate(template).Outputs));
    expect(outputs[0]).toContain('ordersApiUrl');
    expect(outputs[1]).toContain('inventoryApiUrl');
    expect(outputs[2]).toContain('loyaltyApiUrl');
    // One namespace of outputs: a tool reading them all finds each once.
    const all = outputs.flat();
    expect(new Set(all).size).toBe(all.length);
  });

  it('keeps the bootstrap version check for AWS and drops it for an emulator', () => {
    for (const { template } of templates) expect(template.Rules).toHaveProperty('CheckBootstrapVersion');
    for (const { template } of synthExampleTemplates({ emulator: true })) {
      expect(template.Rules).toBeUndefined();
      expect(template.Parameters).toBeUndefined();
    }
  });

  it('writes every resource’s construct path, as `cdk synth` does, so the local runtime can name functions', () => {
    for (const { stackName, template: json } of templates) {
      const template = asTemplate(json);
      for (const id of Object.keys(template.Resources)) {
        expect(resource(template, id).Metadata?.[CDK_PATH], id).toMatch(new RegExp(`^${stackName}/`));
      }
    }
    const names = templates.flatMap(({ template }) =>
      idsOfType(asTemplate(template), 'AWS::Lambda::Function').map((id) =>
        constructName(asTemplate(template), id),
      ),
    );
    expect(names).toEqual(
      expect.arrayContaining([
        'Outbox/Relay',
        'Outbox/Sweeper',
        'CreateOrder',
        'Inventory/Consumer',
        'Loyalty/Consumer',
      ]),
    );
    // Unique across the app: a function is found by its path alone.
    expect(new Set(names).size).toBe(names.length);
  });
});

describe('buildExampleApp', () => {
  it('applies the feature flags of cdk.json, like `cdk synth` does', () => {
    const example = buildExampleApp();
    const flags = Object.entries(cdkJsonContext());
    expect(flags.length).toBeGreaterThan(0);
    for (const [flag, value] of flags) expect(example.orders.node.tryGetContext(flag), flag).toEqual(value);
    expect(example.orders.node.tryGetContext('@aws-cdk/aws-iam:minimizePolicies')).toBe(true);
    expect([example.orders, example.inventory, example.loyalty].map((stack) => stack.stackName)).toEqual(
      Object.values(EXAMPLE_STACK_NAMES),
    );
  });

  it('deploys the order service first: each subscriber depends on it, and it on nothing', () => {
    const example = buildExampleApp();
    expect(example.orders.dependencies).toEqual([]);
    expect(example.inventory.dependencies).toEqual([example.orders]);
    expect(example.loyalty.dependencies).toEqual([example.orders]);
  });

  it(
    'bundles every handler into an ES module that exports `handler` when asked',
    async () => {
      const outdir = mkdtempSync(path.join(tmpdir(), 'outbox-bundle-test-'));
      try {
        const example = buildExampleApp({ bundle: true }, outdir);
        const assembly = Stage.of(example.orders)?.synth();
        if (assembly === undefined) throw new Error('no assembly');
        const bundles = readdirSync(assembly.directory)
          .filter((entry) => entry.startsWith('asset.'))
          .map((entry) => path.join(assembly.directory, entry, 'index.mjs'));
        expect(bundles).toHaveLength(functionCount());
        for (const bundle of bundles) {
          const module: unknown = await import(pathToFileURL(bundle).href);
          expect(typeof (module as { handler?: unknown }).handler, bundle).toBe('function');
        }
      } finally {
        rmSync(outdir, { recursive: true, force: true });
      }
    },
    BUNDLE_TIMEOUT_MS,
  );
});
