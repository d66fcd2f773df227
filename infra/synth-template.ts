/**
 * The example app's CloudFormation templates, synthesized in-process: for the infra tests and for the local runtime,
 * which deploys them to an emulator and runs their functions from them, so that local runs use exactly what
 * `cdk deploy --all` does.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App } from 'aws-cdk-lib';
import {
  cdkJsonContext,
  createExampleApp,
  type ExampleApp,
  type ExampleAppOptions,
} from './stacks/example-app.ts';

/** Options of {@link synthExampleTemplates} and {@link buildExampleApp}. */
export interface SynthTemplateOptions
  extends Pick<ExampleAppOptions, 'emulator' | 'fifo' | 'apiAuthorization' | 'apiEdge'> {
  /**
   * Bundle the handlers with esbuild (slow). Without it the templates are the same except for asset hashes,
   * and nothing is written but the templates.
   * @default false
   */
  readonly bundle?: boolean;
}

/** One synthesized stack of the example: its name and its template. */
export interface ExampleTemplate {
  readonly stackName: string;
  readonly template: Record<string, unknown>;
}

/**
 * The context the CDK CLI adds to every `cdk synth`: without it an in-process app writes no `aws:cdk:path`
 * metadata, and the local runtime names each function by that path (`Outbox/Relay`).
 */
export const CLI_CONTEXT = { 'aws:cdk:enable-path-metadata': true } as const;

/** A fresh app with cdk.json's context and the CLI's, bundling skipped unless `bundle` is set. */
export function exampleCdkApp(options: Pick<SynthTemplateOptions, 'bundle'> = {}, outdir?: string): App {
  return new App({
    ...(outdir === undefined ? {} : { outdir }),
    context: {
      ...cdkJsonContext(),
      ...CLI_CONTEXT,
      // An empty list of stacks to bundle makes NodejsFunction skip esbuild (it only needs the entry file).
      ...(options.bundle === true ? {} : { 'aws:cdk:bundling-stacks': [] }),
    },
  });
}

/** The example's stacks in a fresh app (see {@link exampleCdkApp}). */
export function buildExampleApp(options: SynthTemplateOptions = {}, outdir?: string): ExampleApp {
  const { bundle, ...appOptions } = options;
  return createExampleApp(exampleCdkApp({ ...(bundle === undefined ? {} : { bundle }) }, outdir), appOptions);
}

/**
 * The example's templates as JSON, in the order they deploy (the order service first).
 * @example
 * for (const { stackName, template } of synthExampleTemplates({ emulator: true })) console.log(stackName);
 */
export function synthExampleTemplates(options: SynthTemplateOptions = {}): ExampleTemplate[] {
  // A private output folder, removed afterwards, so repeated synths leave nothing behind in /tmp.
  const outdir = mkdtempSync(join(tmpdir(), 'outbox-synth-'));
  try {
    const example = buildExampleApp(options, outdir);
    const assembly = example.orders.node.root instanceof App ? example.orders.node.root.synth() : undefined;
    if (assembly === undefined) throw new Error('synthExampleTemplates: the example is in no app');
    return [example.orders, example.inventory, example.loyalty].map((stack) => {
      const template: unknown = assembly.getStackArtifact(stack.artifactId).template;
      if (typeof template !== 'object' || template === null) {
        throw new Error(`synthExampleTemplates: the app synthesized no template for ${stack.stackName}`);
      }
      return { stackName: stack.stackName, template: { ...template } };
    });
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
