import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join, relative } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ConfigInvalidError } from '../../lib/config/errors.js';
import { parseRelayConfig } from '../../lib/config/load.js';
import { DESTINATION_TYPES } from '../../lib/notify/kinds.js';

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

/** Every ```json block of a page (indented ones in lists too), with the line it starts on. */
function jsonBlocks(text: string): Array<{ line: number; body: string }> {
  const blocks: Array<{ line: number; body: string }> = [];
  for (const match of text.matchAll(/^([ \t]*)```json[^\n]*\n([\s\S]*?)^\1```/gm)) {
    const indent = match[1] ?? '';
    const body = (match[2] ?? '')
      .split('\n')
      .map((line) => (line.startsWith(indent) ? line.slice(indent.length) : line))
      .join('\n');
    blocks.push({ line: text.slice(0, match.index).split('\n').length, body });
  }
  return blocks;
}

const parsed = (text: string): unknown => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);

const CONFIG_KEYS = ['auth', 'slack', 'destinations', 'routes', 'platform'];
const PLACEHOLDER = { url: 'https://hooks.slack.com/services/T000/B000/XXXX' };
/** A lone destination: what a reader would paste as a whole file, and the start-up check refuses. */
const isDestination = (value: Record<string, unknown>) =>
  (DESTINATION_TYPES as readonly string[]).includes(String(value['type'])) || typeof value['url'] === 'string';

/**
 * What the start-up check must take of a block: a whole configuration as it is; a part of one (a
 * `"member": value` fragment) with the least a configuration needs around it (`auth` none, a
 * `default` destination, the destinations its routes name); nothing for a block that is no
 * configuration (an event, a message, a token's claims). A lone destination is refused as it is.
 */
function configurationOf(body: string): { config: unknown; fragment: boolean } | { refused: string } | undefined {
  const whole = parsed(body);
  if (isObject(whole)) {
    if (CONFIG_KEYS.some((key) => key in whole)) return { config: whole, fragment: false };
    return isDestination(whole) ? { refused: 'a destination alone: show it in a whole configuration' } : undefined;
  }
  const part = parsed(`{${body}}`);
  if (!isObject(part)) return whole === undefined ? { refused: 'neither JSON nor a member of a JSON object' } : undefined;
  if (!CONFIG_KEYS.some((key) => key in part)) {
    if (!Object.values(part).every((value) => isObject(value) && isDestination(value))) return undefined;
    return { config: { auth: { method: 'none' }, destinations: { default: PLACEHOLDER, ...part } }, fragment: true };
  }
  const routes = Array.isArray(part['routes']) ? (part['routes'] as Array<{ to?: unknown }>) : [];
  const named = routes.flatMap((route) => (Array.isArray(route.to) ? (route.to as string[]) : []));
  const destinations = {
    default: PLACEHOLDER,
    ...Object.fromEntries(named.map((name) => [name, PLACEHOLDER])),
    ...(isObject(part['destinations']) ? part['destinations'] : {}),
  };
  return { config: { auth: { method: 'none' }, ...part, destinations }, fragment: true };
}

describe('the documentation', () => {
  it('the README stays short: at most 300 lines', () => {
    expect(readFileSync(join(root, 'README.md'), 'utf8').split('\n').length).toBeLessThanOrEqual(300);
  });

  it.each(pages.filter((page) => page.startsWith('docs/')))('%s: every configuration example passes the start-up check', (page) => {
    const problems: string[] = [];
    for (const { line, body } of jsonBlocks(readFileSync(join(root, page), 'utf8'))) {
      const found = configurationOf(body);
      if (found === undefined) continue;
      if ('refused' in found) {
        problems.push(`line ${line}: ${found.refused}`);
        continue;
      }
      try {
        parseRelayConfig(JSON.stringify(found.config));
      } catch (error) {
        if (!(error instanceof ConfigInvalidError)) throw error;
        const what = found.fragment ? 'a part of a configuration' : 'a configuration';
        problems.push(`line ${line}: ${what}: ${error.problems.map((p) => `${p.path}: ${p.problem}`).join('; ')}`);
      }
    }
    expect(problems).toEqual([]);
  });

  it('finds the examples: whole configurations and parts of them, in every page that shows one', () => {
    const found = pages
      .filter((page) => page.startsWith('docs/'))
      .flatMap((page) => jsonBlocks(readFileSync(join(root, page), 'utf8')).map(({ body }) => configurationOf(body)))
      .filter((f) => f !== undefined && 'config' in f);
    expect(found.filter((f) => !f.fragment).length).toBeGreaterThanOrEqual(7);
    expect(found.filter((f) => f.fragment).length).toBeGreaterThanOrEqual(4);
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
