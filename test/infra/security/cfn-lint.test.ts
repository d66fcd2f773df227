import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { basename, join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { templateForEmulator } from '../../../infra/dev/local/backends/emulator-template.ts';
import { SYNTH_TIMEOUT_MS } from '../template-queries.ts';
import { type CheckedApp, constructApp, exampleApp } from './checked-stacks.ts';

/**
 * cfn-lint warnings that CDK's own output carries, by rule, with why they are not a problem. Errors are never
 * listed here: a template with an error is not deployable as written.
 */
const KNOWN_WARNINGS: Readonly<Record<string, string>> = {
  W3005:
    "CDK makes a function depend on its role's default policy as well as on the role it already references " +
    'with GetAtt, so that the function is created only once its permissions are attached; the duplicate ' +
    'DependsOn on the role is harmless.',
};

/** One cfn-lint finding, as `--format json` prints it (the fields the test reads). */
interface CfnLintFinding {
  readonly Filename: string;
  readonly Level: string;
  readonly Message: string;
  readonly Location: { readonly Path: readonly (string | number)[] };
  readonly Rule: { readonly Id: string };
}

/** How to get cfn-lint, for the failure when it is missing (CI machines have it preinstalled). */
const INSTALL_HINT =
  'cfn-lint 1.x is not on the PATH: install it with `pip install cfn-lint` and run the tests again';

/**
 * Runs cfn-lint once over `files` (finding it on the PATH of `env`) and returns its findings; throws when it is
 * missing or fails to run.
 */
function cfnLint(files: readonly string[], env: NodeJS.ProcessEnv = process.env): CfnLintFinding[] {
  // `none`: the exit code says nothing the JSON does not; a crash still shows as unparsable output.
  const run = spawnSync('cfn-lint', ['--format', 'json', '--non-zero-exit-code', 'none', '--', ...files], {
    encoding: 'utf8',
    env,
    maxBuffer: 64 * 1024 * 1024,
  });
  if (run.error !== undefined) {
    const missing = (run.error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(missing ? INSTALL_HINT : `cfn-lint did not run: ${run.error.message}`, {
      cause: run.error,
    });
  }
  try {
    return JSON.parse(run.stdout) as CfnLintFinding[];
  } catch (cause) {
    throw new Error(`cfn-lint printed no JSON (exit ${run.status}): ${run.stderr || run.stdout}`, { cause });
  }
}

/** A finding as one readable line: file, level, rule, where and what. */
function describeFinding(finding: CfnLintFinding): string {
  return `${finding.Filename}: ${finding.Level} ${finding.Rule.Id} at ${finding.Location.Path.join('/')}: ${finding.Message}`;
}

/** The template file a stack of a synthesized app was written to. */
function templatePaths(checked: CheckedApp): string[] {
  const assembly = checked.app.synth();
  return checked.stacks.map((stack) => assembly.getStackArtifact(stack.artifactId).templateFullPath);
}

/** Whether cfn-lint (a Python tool) is on this machine's PATH: without it the lint is skipped, saying so. */
const CFN_LINT_INSTALLED = spawnSync('cfn-lint', ['--version'], { encoding: 'utf8' }).error === undefined;

describe.skipIf(!CFN_LINT_INSTALLED)(
  `cfn-lint on every synthesized template${CFN_LINT_INSTALLED ? '' : ' [skipped: cfn-lint is not on the PATH; pip install cfn-lint to run it; cdk-nag runs either way]'}`,
  () => {
    const workDir = mkdtempSync(join(tmpdir(), 'outbox-cfn-lint-'));
    let templates: string[] = [];
    let findings: CfnLintFinding[] = [];

    beforeAll(() => {
      const example = templatePaths(exampleApp({ outdir: join(workDir, 'example') }));
      const emulator = templatePaths(exampleApp({ outdir: join(workDir, 'emulator'), emulator: true }));
      // What the local runtime deploys to moto: the emulator variant without mappings and with placeholder code.
      const deployedDir = join(workDir, 'deployed');
      mkdirSync(deployedDir);
      const deployed = emulator.map((path) => {
        const target = join(deployedDir, basename(path));
        writeFileSync(
          target,
          JSON.stringify(
            templateForEmulator(
              JSON.parse(readFileSync(path, 'utf8')),
              `${basename(path, '.template.json')}-local`,
            ),
          ),
        );
        return target;
      });
      const constructs = templatePaths(constructApp(join(workDir, 'constructs')));
      templates = [...example, ...emulator, ...deployed, ...constructs];
      findings = cfnLint(templates);
    }, SYNTH_TIMEOUT_MS);

    afterAll(() => rmSync(workDir, { recursive: true, force: true }));

    it('lints the example, its emulator variants, the minimal and full construct stacks and a subscriber', () => {
      expect(templates.map((path) => path.slice(workDir.length + 1))).toEqual([
        ...['example', 'emulator', 'deployed'].flatMap((variant) =>
          ['OutboxOrders', 'OutboxInventory', 'OutboxLoyalty'].map(
            (stack) => `${variant}/${stack}.template.json`,
          ),
        ),
        'constructs/MinimalOutbox.template.json',
        'constructs/FullOutbox.template.json',
        'constructs/ShippingSubscriber.template.json',
      ]);
    });

    it('finds no errors and no warnings other than the known ones', () => {
      const unexpected = findings.filter(
        (finding) => finding.Level !== 'Warning' || KNOWN_WARNINGS[finding.Rule.Id] === undefined,
      );
      expect(unexpected.map(describeFinding)).toEqual([]);
    });
  },
);

describe('cfn-lint missing', () => {
  it('names how to install cfn-lint when the helper cannot find it', () => {
    const emptyPath = mkdtempSync(join(tmpdir(), 'empty-path-'));
    try {
      expect(() => cfnLint(['template.json'], { PATH: emptyPath })).toThrow(/pip install cfn-lint/);
    } finally {
      rmSync(emptyPath, { recursive: true, force: true });
    }
  });
});
