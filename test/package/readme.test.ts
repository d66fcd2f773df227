/**
 * The README's "Use it in your service" section shows exactly the code the package test type-checks, runs and
 * synthesizes in a fresh project, so the documentation cannot drift from what works.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';

const README = readFileSync(new URL('../../README.md', import.meta.url), 'utf8');
const FIXTURE = new URL('./fixture/src/', import.meta.url);

describe('README "Use it in your service"', () => {
  it.each(readdirSync(FIXTURE).filter((name) => name.endsWith('.ts')))(
    'shows %s as the package test runs it',
    (name) => {
      const code = readFileSync(new URL(name, FIXTURE), 'utf8').trim();

      expect(README).toContain(`\`\`\`ts\n// ${name}\n${code}\n\`\`\``);
    },
  );
});

describe('README "Configuration"', () => {
  it('lists every variable of the settings contract', async () => {
    const { OutboxSettings } = await import('../../shared/settings/outbox-settings.ts');
    const section = README.slice(
      README.indexOf('## Configuration'),
      README.indexOf('## What is verified where'),
    );

    for (const setting of Object.values(OutboxSettings)) expect(section).toContain(`\`${setting.name}\``);
  });
});
