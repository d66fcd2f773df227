/** The console page's bundle: built from the sources, small, and fetching nothing from anywhere. */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { loadConsoleAssets, writeConsoleBundle } from '../../../../shared/cli/console/console-assets.ts';

const outdir = mkdtempSync(join(tmpdir(), 'console-bundle-'));

afterAll(() => rmSync(outdir, { recursive: true, force: true }));

describe('the console bundle', () => {
  it('is bundled from the sources when no prebuilt bundle is beside the module', async () => {
    const assets = await loadConsoleAssets();

    expect(assets.origin).toBe('bundled');
    expect(assets.script).toContain('/api/');
    expect(assets.style).toContain('.pipeline');
  });

  it('is written by the build as one script and one style sheet, under 200 KB gzipped in all', async () => {
    const { files } = await writeConsoleBundle(outdir);
    const bytes = files.map((file) => gzipSync(readFileSync(file)).length);
    process.stdout.write(
      `console bundle: ${files.map((file, n) => `${file.split('/').at(-1)} ${bytes[n]} B gzipped`).join(', ')}\n`,
    );

    expect(files.map((file) => file.split('/').at(-1))).toEqual(['console.js', 'console.css']);
    expect(bytes.reduce((sum, size) => sum + size, 0)).toBeLessThan(200 * 1024);
  });

  it('names no other host: no script, style, font or API is fetched from anywhere but the console', async () => {
    const { script, style } = await loadConsoleAssets();
    // Preact names the SVG, MathML and XHTML namespaces; a namespace is an identifier, never fetched.
    const namespaces =
      /^http:\/\/www\.w3\.org\/(2000\/svg|1998\/Math\/MathML|1999\/xhtml|1999\/xlink|XML\/1998\/namespace)$/;
    const urls = [
      ...`${script}\n${style}`.matchAll(/\b(?:https?:)?\/\/[a-z0-9.-]+\.[a-z]{2,}[^"'`\s)]*/gi),
    ].map((m) => m[0]);

    expect(urls.filter((url) => !namespaces.test(url))).toEqual([]);
    expect(style).not.toMatch(/@import|url\(/);
  });
});
