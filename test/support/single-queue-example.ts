/**
 * The single-queue example (one stack, one topic queue, one consumer that confirms in the outbox) synthesized
 * in-process, as the tests of that shape of the outbox run it: in a fresh app with cdk.json's context, on the local
 * runtime or read as a template.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { DefaultStackSynthesizer, Stage } from 'aws-cdk-lib';
import type { ApiAuthorization } from '../../infra/stacks/api-authorization.ts';
import type { ApiEdgeProps } from '../../infra/stacks/api-edge.ts';
import { exampleCdkApp } from '../../infra/synth-template.ts';
import { SingleQueueExampleStack } from './single-queue-example-stack.ts';

/** The single-queue example's stack name: deployed locally as `OutboxExample-local`. */
export const SINGLE_QUEUE_STACK_NAME = 'OutboxExample';

/** Options of {@link buildSingleQueueExample} and {@link synthSingleQueueTemplate}. */
export interface SingleQueueOptions {
  /** Bundle the handlers with esbuild (slow). @default false */
  readonly bundle?: boolean;
  /** Synthesize for an emulator: no BootstrapVersion rule. @default false */
  readonly emulator?: boolean;
  /** The order events through a FIFO queue. @default false */
  readonly fifo?: boolean;
  /** @default ApiAuthorization.iam() */
  readonly apiAuthorization?: ApiAuthorization;
  /** @default - the edge's defaults */
  readonly apiEdge?: ApiEdgeProps;
}

/** The single-queue example's stack in a fresh app. */
export function buildSingleQueueExample(
  options: SingleQueueOptions = {},
  outdir?: string,
): SingleQueueExampleStack {
  const app = exampleCdkApp({ ...(options.bundle === undefined ? {} : { bundle: options.bundle }) }, outdir);
  return new SingleQueueExampleStack(app, SINGLE_QUEUE_STACK_NAME, {
    ...(options.apiAuthorization === undefined ? {} : { apiAuthorization: options.apiAuthorization }),
    ...(options.apiEdge === undefined ? {} : { apiEdge: options.apiEdge }),
    ...(options.fifo === true ? { fifo: true } : {}),
    description: 'Serverless transactional outbox: order and inventory, one queue (a test fixture)',
    ...(options.emulator === true
      ? { synthesizer: new DefaultStackSynthesizer({ generateBootstrapVersionRule: false }) }
      : {}),
  });
}

/** The single-queue example's template as JSON. */
export function synthSingleQueueTemplate(options: SingleQueueOptions = {}): Record<string, unknown> {
  const outdir = mkdtempSync(join(tmpdir(), 'outbox-synth-'));
  try {
    const stack = buildSingleQueueExample(options, outdir);
    const template: unknown = Stage.of(stack)?.synth().getStackArtifact(stack.artifactId).template;
    if (typeof template !== 'object' || template === null) {
      throw new Error('synthSingleQueueTemplate: the app synthesized no template');
    }
    return { ...template };
  } finally {
    rmSync(outdir, { recursive: true, force: true });
  }
}
