import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';

const root = new URL('../../', import.meta.url).pathname;
const pages = [
  'README.md',
  'bench/README.md',
  'CHANGELOG.md',
  ...readdirSync(join(root, 'docs'))
    .filter((f) => f.endsWith('.md'))
    .map((f) => `docs/${f}`),
];

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces to hyphens. */
const slug = (heading: string) =>
  heading
    .trim()
    .toLowerCase()
    .replace(/[`*_]/g, '')
    .replace(/[^\p{L}\p{N} -]/gu, '')
    .replace(/ /g, '-');

function anchorsOf(text: string): Set<string> {
  const anchors = new Set<string>();
  let inCode = false;
  for (const line of text.split('\n')) {
    if (line.startsWith('```')) inCode = !inCode;
    const heading = !inCode && /^#{1,6} (.*)$/.exec(line);
    if (heading) anchors.add(slug(heading[1] ?? ''));
  }
  return anchors;
}

describe('the documentation', () => {
  it('the README stays short: at most 300 lines', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });

  it('the README names every tool without which CI fails the run, and .ci/run installs each', () => {
    // What the tests require in CI (`... is required in CI`), found where they say so.
    const testFiles = (dir: string): string[] =>
      readdirSync(join(root, dir), { withFileTypes: true }).flatMap((entry) =>
        entry.isDirectory() ? testFiles(join(dir, entry.name)) : entry.name.endsWith('.ts') ? [join(dir, entry.name)] : [],
      );
    const required = new Set<string>();
    for (const file of testFiles('test')) {
      for (const match of readFileSync(join(root, file), 'utf8').matchAll(/(\w[\w-]*) is required in CI/g))
        required.add(match[1] as string);
    }
    expect([...required].sort()).toEqual(['Chromium', 'cfn-lint', 'moto_server']);
    const readme = readFileSync(join(root, 'README.md'), 'utf8');
    const ci = readFileSync(join(root, '.ci/run'), 'utf8');
    for (const tool of required) {
      expect(readme, tool).toContain(tool.toLowerCase() === 'chromium' ? 'Chromium' : `\`${tool}\``);
      expect(ci.toLowerCase(), tool).toContain(tool.toLowerCase());
    }
  });

  it.each(pages)('%s links only to files and headings that exist', (page) => {
    const text = readFileSync(join(root, page), 'utf8').replace(/```[\s\S]*?```/g, '');
    const broken: string[] = [];
    for (const match of text.matchAll(/\]\(([^)\s]+)\)/g)) {
      const target = match[1] ?? '';
      if (/^[a-z]+:/.test(target)) continue;
      const [file, anchor] = target.split('#') as [string, string | undefined];
      const path = file === '' ? join(root, page) : join(root, dirname(page), file);
      if (!existsSync(path)) {
        broken.push(`${target} (no file ${relative(root, path)})`);
        continue;
      }
      if (anchor && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(anchor)) broken.push(`${target} (no such heading)`);
    }
    expect(broken).toEqual([]);
  });
});
