import { readdirSync } from 'node:fs';
import path from 'node:path';
import { pathToFileURL } from 'node:url';
import { Stage } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { buildExampleStack, synthExampleTemplate } from '../../infra/synth-template.ts';
import { topology } from '../../infra/topology.ts';

describe('synthExampleTemplate', () => {
  it('returns the example stack template', () => {
    const template = synthExampleTemplate();
    expect(Object.keys(template.Resources as object).length).toBeGreaterThan(0);
    expect(Object.keys(template.Outputs as object)).toContain('apiUrl');
  });

  it('keeps the bootstrap version check for AWS and drops it for an emulator', () => {
    expect(synthExampleTemplate().Rules).toHaveProperty('CheckBootstrapVersion');
    const emulator = synthExampleTemplate({ emulator: true });
    expect(emulator.Rules).toBeUndefined();
    expect(emulator.Parameters).toBeUndefined();
  });

  it('applies the feature flags of cdk.json, like `cdk synth` does', () => {
    const stack = buildExampleStack();
    expect(stack.node.tryGetContext('@aws-cdk/aws-iam:minimizePolicies')).toBe(true);
    expect(stack.stackName).toBe(topology.stackName);
  });

  it('bundles every handler into an ES module that exports `handler` when asked', async () => {
    const stack = buildExampleStack({ bundle: true });
    const assembly = Stage.of(stack)?.synth();
    if (assembly === undefined) throw new Error('no assembly');
    const bundles = readdirSync(assembly.directory)
      .filter((entry) => entry.startsWith('asset.'))
      .map((entry) => path.join(assembly.directory, entry, 'index.mjs'));
    expect(bundles).toHaveLength(Object.keys(topology.functions).length);
    for (const bundle of bundles) {
      const module: unknown = await import(pathToFileURL(bundle).href);
      expect(typeof (module as { handler?: unknown }).handler, bundle).toBe('function');
    }
  });
});
