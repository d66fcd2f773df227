import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { readApp } from '../../infra/dev/local/template/read-app.ts';
import { synthesizeApp } from '../../infra/dev/local/template/synthesize-app.ts';

const NOTES_APP = resolve(import.meta.dirname, 'fixtures/notes-app');
const MAIL_APP = resolve(import.meta.dirname, 'fixtures/mail-app');
const scratch = mkdtempSync(join(tmpdir(), 'synth-test-'));

afterAll(() => {
  rmSync(scratch, { recursive: true, force: true });
});

describe('synthesizeApp', () => {
  it('runs cdk.json’s app in the project directory with path metadata on, entries relative to the project', async () => {
    const { stacks } = await synthesizeApp({ projectDir: NOTES_APP });
    expect(
      stacks.map(({ stackName, displayName, dependencies }) => ({ stackName, displayName, dependencies })),
    ).toEqual([{ stackName: 'NotesApp', displayName: 'NotesApp', dependencies: [] }]);
    const app = readApp(stacks[0]?.template ?? { Resources: {} });
    expect(app.functions.map((fn) => [fn.name, fn.entry])).toEqual([
      ['Writer', '../writer.ts'],
      ['Audit/Auditor', '../auditor.ts'],
    ]);
  });

  it('fails with the app’s own output when the app command fails', async () => {
    writeFileSync(
      join(scratch, 'cdk.json'),
      JSON.stringify({ app: 'node -e "console.error(\'no stacks here\'); process.exit(3)"' }),
    );
    await expect(synthesizeApp({ projectDir: scratch })).rejects.toMatchObject({
      code: 'SYNTH_FAILED',
      message: expect.stringMatching(/exited with code 3:\nno stacks here/),
    });
  });

  it('returns every stack of the app, each after the stacks it depends on, or the one stackName names', async () => {
    const app = [
      "const fs = require('node:fs'); const out = process.env.CDK_OUTDIR;",
      "const stack = (name, dependencies) => ({ type: 'aws:cloudformation:stack', displayName: 'App/' + name, dependencies, properties: { templateFile: name + '.json', stackName: 'App-' + name } });",
      "for (const name of ['One', 'Two', 'Three']) fs.writeFileSync(out + '/' + name + '.json', JSON.stringify({ Resources: {}, Description: name }));",
      // Two depends on Three (and on its asset manifest, which is no stack), though the manifest lists it first.
      "fs.writeFileSync(out + '/manifest.json', JSON.stringify({ artifacts: { One: stack('One', []), Two: stack('Two', ['Three', 'Two.assets']), 'Two.assets': { type: 'cdk:asset-manifest', properties: {} }, Three: stack('Three', ['One']) } }));",
    ].join(' ');
    writeFileSync(
      join(scratch, 'cdk.json'),
      JSON.stringify({ app: `node -e "${app.replaceAll('"', '\\"')}"` }),
    );

    const { stacks } = await synthesizeApp({ projectDir: scratch });

    expect(
      stacks.map(({ stackName, displayName, dependencies, template }) => ({
        stackName,
        displayName,
        dependencies,
        description: template.Description,
      })),
    ).toEqual([
      { stackName: 'App-One', displayName: 'App/One', dependencies: [], description: 'One' },
      { stackName: 'App-Three', displayName: 'App/Three', dependencies: ['App-One'], description: 'Three' },
      { stackName: 'App-Two', displayName: 'App/Two', dependencies: ['App-Three'], description: 'Two' },
    ]);
    for (const wanted of ['App-Two', 'App/Two', 'Two']) {
      const picked = await synthesizeApp({ projectDir: scratch, stackName: wanted });
      expect(picked.stacks.map((stack) => stack.stackName)).toEqual(['App-Two']);
      expect(picked.stackCount).toBe(3);
    }
    await expect(synthesizeApp({ projectDir: scratch, stackName: 'Four' })).rejects.toThrow(
      'the app has no stack Four (stacks: App/One, App/Two, App/Three)',
    );
  });

  it('reads a CDK app of two stacks with a cross-stack reference: the importing stack after the exporting one', async () => {
    const { stacks } = await synthesizeApp({ projectDir: MAIL_APP });

    expect(stacks.map(({ stackName, dependencies }) => [stackName, dependencies])).toEqual([
      ['Shop', []],
      ['Mailroom', ['Shop']],
    ]);
    expect(JSON.stringify(stacks[1]?.template)).toContain('"Fn::ImportValue":"Shop:ExportsOutput');
  });

  it('passes cdk.json’s context to the app, with the local runtime’s settings over it', async () => {
    const app = [
      "const fs = require('node:fs'); const out = process.env.CDK_OUTDIR;",
      'const context = JSON.parse(process.env.CDK_CONTEXT_JSON);',
      "fs.writeFileSync(out + '/S.json', JSON.stringify({ Resources: {}, Context: context }));",
      "fs.writeFileSync(out + '/manifest.json', JSON.stringify({ artifacts: { S: { type: 'aws:cloudformation:stack', properties: { templateFile: 'S.json' } } } }));",
    ].join(' ');
    writeFileSync(
      join(scratch, 'cdk.json'),
      JSON.stringify({
        app: `node -e "${app.replaceAll('"', '\\"')}"`,
        context: { flag: 'on', 'aws:cdk:bundling-stacks': ['**'] },
      }),
    );
    const { stacks } = await synthesizeApp({ projectDir: scratch });
    expect(stacks[0]?.template.Context).toEqual({
      flag: 'on',
      'aws:cdk:enable-path-metadata': true,
      'aws:cdk:bundling-stacks': [],
    });
  });

  it('names cdk.json when there is none', async () => {
    await expect(synthesizeApp({ projectDir: join(scratch, 'nowhere') })).rejects.toThrow(/cdk\.json/);
  });
});
