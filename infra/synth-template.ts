/**
 * The example stack's CloudFormation template, synthesized in-process: for the infra tests and for the local
 * runtime, which deploys it to an emulator and runs its functions from it, so that local runs use exactly
 * what `cdk deploy` does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stage } from 'aws-cdk-lib';
import { cdkJsonContext, createExampleStack } from './stacks/example-app.ts';
import type { OutboxExampleStack } from './stacks/outbox-example-stack.ts';

/** Options of {@link synthExampleTemplate} and {@link buildExampleStack}. */
export interface SynthTemplateOptions {
  /**
   * Bundle the handlers with esbuild (slow). Without it the template is the same except for asset hashes,
   * and nothing is written but the template.
   * @default false
   */
  readonly bundle?: boolean;
  /**
   * Synthesize for an emulator: no BootstrapVersion rule or parameter, which moto cannot evaluate.
   * @default false
   */
  readonly emulator?: boolean;
  /**
   * The order events through a FIFO queue (see `OutboxExampleStackProps.fifo`).
   * @default false
   */
  readonly fifo?: boolean;
}

/**
 * The context the CDK CLI adds to every `cdk synth`: without it an in-process app writes no `aws:cdk:path`
 * metadata, and the local runtime names each function by that path (`Outbox/Relay`).
 */
const CLI_CONTEXT = { 'aws:cdk:enable-path-metadata': true } as const;

/** The example stack in a fresh app with cdk.json's context, bundling skipped unless `bundle` is set. */
export function buildExampleStack(options: SynthTemplateOptions = {}, outdir?: string): OutboxExampleStack {
  const app = new App({
    ...(outdir === undefined ? {} : { outdir }),
    context: {
      ...cdkJsonContext(),
      ...CLI_CONTEXT,
      // An empty list of stacks to bundle makes NodejsFunction skip esbuild (it only needs the entry file).
      ...(options.bundle === true ? {} : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
  return createExampleStack(app, { emulator: options.emulator === true, fifo: options.fifo === true });
}

/**
 * The example stack's CloudFormation template as JSON.
 * @example
 * const template = synthExampleTemplate({ emulator: true });
 * await cloudFormation.send(new CreateStackCommand({ StackName: 'OutboxExample', TemplateBody: JSON.stringify(template) }));
 */
export function synthExampleTemplate(options: SynthTemplateOptions = {}): Record<string, unknown> {
  // A private output folder, removed afterwards, so repeated synths leave nothing behind in /tmp.
  const outdir = mkdtempSync(join(tmpdir(), 'outbox-synth-'));
  try {
    const stack = buildExampleStack(options, outdir);
    const assembly = Stage.of(stack)?.synth();
    const template: unknown = assembly?.getStackArtifact(stack.artifactId).template;
    if (typeof template !== 'object' || template === null) {
      throw new Error('synthExampleTemplate: the app synthesized no template for the example stack');
    }
    return { ...template };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
