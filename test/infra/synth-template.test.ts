import { mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Stage } from 'aws-cdk-lib';
import { beforeAll, describe, expect, it } from 'vitest';
import { cdkJsonContext, EXAMPLE_STACK_NAME } from '../../infra/stacks/example-app.ts';
import { buildExampleStack, synthExampleTemplate } from '../../infra/synth-template.ts';
import {
  asTemplate,
  CDK_PATH,
  type CfnTemplate,
  constructName,
  idsOfType,
  resource,
  SYNTH_TIMEOUT_MS,
} from './template-queries.ts';

/** Bundling every handler with esbuild takes a while on a busy machine. */
const BUNDLE_TIMEOUT_MS = 300_000;

let template: CfnTemplate;

beforeAll(() => {
  template = asTemplate(synthExampleTemplate());
}, SYNTH_TIMEOUT_MS);

describe('synthExampleTemplate', () => {
  it('returns the example stack template', () => {
    expect(idsOfType(template, 'AWS::Lambda::Function').length).toBeGreaterThan(0);
    expect(Object.keys(template.Outputs)).toContain('apiUrl');
  });

  it('keeps the bootstrap version check for AWS and drops it for an emulator', () => {
    expect(template.Rules).toHaveProperty('CheckBootstrapVersion');
    const emulator = synthExampleTemplate({ emulator: true });
    expect(emulator.Rules).toBeUndefined();
    expect(emulator.Parameters).toBeUndefined();
  });

  it('writes every resource’s construct path, as `cdk synth` does, so the local runtime can name functions', () => {
    for (const id of Object.keys(template.Resources)) {
      expect(resource(template, id).Metadata?.[CDK_PATH], id).toMatch(new RegExp(`^${EXAMPLE_STACK_NAME}/`));
    }
    const names = idsOfType(template, 'AWS::Lambda::Function').map((id) => constructName(template, id));
    expect(names).toEqual(expect.arrayContaining(['Outbox/Relay', 'Outbox/Sweeper', 'CreateOrder']));
  });
});

describe('buildExampleStack', () => {
  it('applies the feature flags of cdk.json, like `cdk synth` does', () => {
    const stack = buildExampleStack();
    const flags = Object.entries(cdkJsonContext());
    expect(flags.length).toBeGreaterThan(0);
    for (const [flag, value] of flags) expect(stack.node.tryGetContext(flag), flag).toEqual(value);
    expect(stack.node.tryGetContext('@aws-cdk/aws-iam:minimizePolicies')).toBe(true);
    expect(stack.stackName).toBe(EXAMPLE_STACK_NAME);
  });

  it(
    'bundles every handler into an ES module that exports `handler` when asked',
    async () => {
      const outdir = mkdtempSync(path.join(tmpdir(), 'outbox-bundle-test-'));
      try {
        const stack = buildExampleStack({ bundle: true }, outdir);
        const assembly = Stage.of(stack)?.synth();
        if (assembly === undefined) throw new Error('no assembly');
        const bundles = readdirSync(assembly.directory)
          .filter((entry) => entry.startsWith('asset.'))
          .map((entry) => path.join(assembly.directory, entry, 'index.mjs'));
        expect(bundles).toHaveLength(idsOfType(template, 'AWS::Lambda::Function').length);
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
