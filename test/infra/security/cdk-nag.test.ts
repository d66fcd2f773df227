import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { App, Stack, Validations } from 'aws-cdk-lib';
import * as sqs from 'aws-cdk-lib/aws-sqs';
import { AwsSolutionsChecks, type NagPack, ServerlessChecks } from 'cdk-nag';
import type { IConstruct } from 'constructs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { SYNTH_TIMEOUT_MS } from '../template-queries.ts';
import {
  type CheckedApp,
  constructApp,
  exampleApp,
  minimalOutboxStack,
  USER_API_ID,
} from './checked-stacks.ts';

/** One finding: the rule (with the finding, for per-finding rules), its severity and the resource's path. */
interface NagFinding {
  readonly rule: string;
  readonly severity: string;
  readonly path: string;
}

/** The rule packs the stacks are held to. */
function rulePacks(): NagPack[] {
  return [new AwsSolutionsChecks(), new ServerlessChecks()];
}

/**
 * The unacknowledged findings of every pack on `scope`, as `cdk synth` with the packs added by
 * `Validations.of(app).addPlugins(...)` reports them (the packs run on the synthesized construct tree).
 */
function nagFindings(scope: IConstruct): NagFinding[] {
  return rulePacks().flatMap((pack) =>
    pack.validateScope(scope).violations.flatMap((violation) =>
      violation.violatingResources.map((resource) => ({
        rule: violation.ruleName,
        severity: violation.severity ?? 'error',
        path: resource.constructPath ?? '(unknown)',
      })),
    ),
  );
}

/** A finding as one readable line. */
function describeFinding(finding: NagFinding): string {
  return `${finding.severity} ${finding.rule} on ${finding.path}`;
}

/**
 * The acknowledgements recorded on `construct` itself: rule id → reason (ids without the `Annotation::` prefix
 * aws-cdk-lib stores them under, as cdk-nag reads them).
 */
function acknowledgementsOn(construct: IConstruct): Record<string, string> {
  return Object.fromEntries(
    construct.node.metadata
      .filter((entry) => entry.type === Validations.ACKNOWLEDGED_RULES_METADATA_KEY)
      .flatMap((entry) => Object.entries(entry.data as Record<string, string>))
      .map(([id, reason]) => [id.replace(/^annotation::/i, ''), reason]),
  );
}

describe('cdk-nag (AwsSolutions and Serverless packs)', () => {
  const workDir = mkdtempSync(join(tmpdir(), 'outbox-cdk-nag-'));
  let example: CheckedApp;
  let constructs: ReturnType<typeof constructApp>;

  beforeAll(() => {
    example = exampleApp({ outdir: join(workDir, 'example') });
    constructs = constructApp(join(workDir, 'constructs'));
  }, SYNTH_TIMEOUT_MS);

  afterAll(() => rmSync(workDir, { recursive: true, force: true }));

  it('finds nothing unacknowledged in the example app', () => {
    expect(nagFindings(example.app).map(describeFinding)).toEqual([]);
  });

  it('finds nothing unacknowledged in an outbox with its defaults and one consumer', () => {
    expect(nagFindings(Stack.of(constructs.minimal)).map(describeFinding)).toEqual([]);
  });

  it('finds nothing unacknowledged in the resources of an outbox with a key, the archive and the admin API', () => {
    const stack = Stack.of(constructs.full);
    // The REST API is the user's to configure; only its admin routes are the outbox's.
    const usersApi = `${stack.node.path}/${USER_API_ID}/`;
    const outboxs = nagFindings(stack).filter(
      (finding) => !finding.path.startsWith(usersApi) || finding.path.startsWith(`${usersApi}Default/admin/`),
    );
    expect(outboxs.map(describeFinding)).toEqual([]);
  });

  it("finds nothing unacknowledged in a subscriber's stack (its own key, the producer's claim check)", () => {
    expect(nagFindings(Stack.of(constructs.subscriber)).map(describeFinding)).toEqual([]);
  });

  it('lets a user synthesize an app with the packs added as validation plugins, and fails one with a real finding', () => {
    const synthWithPacks = (addPlainQueue: boolean) => {
      const app = new App({
        outdir: mkdtempSync(join(workDir, 'plugins-')),
        context: { 'aws:cdk:bundling-stacks': [] },
      });
      const outbox = minimalOutboxStack(app);
      // A queue with neither TLS enforcement nor a dead-letter queue: findings nobody acknowledged.
      if (addPlainQueue) new sqs.Queue(Stack.of(outbox), 'PlainQueue');
      Validations.of(app).addPlugins(new AwsSolutionsChecks(app), new ServerlessChecks(app));
      return () => app.synth();
    };
    expect(synthWithPacks(false)).not.toThrow();
    expect(synthWithPacks(true)).toThrow(/AwsSolutions-SQS4/);
  });

  it('gives every acknowledgement in the checked apps a reason of at least a sentence', () => {
    const scopes = [example.app, constructs.app].flatMap((app) => app.node.findAll());
    const thin = scopes.flatMap((scope) =>
      Object.entries(acknowledgementsOn(scope))
        .filter(([, reason]) => reason.trim().length < 40)
        .map(([id, reason]) => `${scope.node.path}: ${id} — '${reason}'`),
    );
    expect(thin).toEqual([]);
  });

  it('acknowledges a finding the outbox has by design only on the resource that has it', () => {
    const { minimal } = constructs;
    const relayOnly = Object.keys(acknowledgementsOn(minimal.relay));
    expect(relayOnly).toEqual(
      expect.arrayContaining(['AwsSolutions-IAM5[Resource::*]', 'Serverless-LambdaDLQ']),
    );
    // Nothing is acknowledged for the whole outbox or stack, which would hide the user's own resources too.
    expect(acknowledgementsOn(minimal)).toEqual({});
    expect(acknowledgementsOn(Stack.of(minimal))).toEqual({});
  });
});
