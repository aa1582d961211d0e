import { existsSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';

const ENV_NAME = '[A-Z][A-Z0-9_]*';
// `process.env.X`, `process.env['X']`, and the same on an `env` record handed down from process.env.
const MEMBER_READ = new RegExp(`\\benv(?:\\?\\.|\\.)(${ENV_NAME})\\b|\\benv\\??\\.?\\[\\s*['"\`](${ENV_NAME})['"\`]\\s*\\]`, 'g');
const DESTRUCTURED = /(?:const|let|var)\s*\{([^}]*)\}\s*=\s*process\.env\b/g;

/** Our own source files (not node_modules) that esbuild put into `dist/<fn>/index.mjs`. */
export function bundledSources(root: string, functionName: string): string[] {
  const metaFile = join(root, 'dist', 'meta', `${functionName}.json`);
  if (!existsSync(metaFile)) throw new Error(`dist/meta/${functionName}.json is missing: run npm run build`);
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as { inputs: Record<string, unknown> };
  // `<dir>/lazy:<specifier>` names the stub each lazy package bundle is built from, not a file of ours.
  return Object.keys(meta.inputs).filter(
    (path) => !path.includes('node_modules') && !path.includes('/lazy:') && /\.[cm]?[jt]s$/.test(path),
  );
}

function readsInText(text: string): string[] {
  const names: string[] = [];
  for (const match of text.matchAll(MEMBER_READ)) names.push((match[1] ?? match[2]) as string);
  for (const match of text.matchAll(DESTRUCTURED)) {
    for (const part of (match[1] ?? '').split(',')) {
      const name = part.split(/[:=]/)[0]?.trim();
      if (name && new RegExp(`^${ENV_NAME}$`).test(name)) names.push(name);
    }
  }
  return names;
}

// Classic zod and zod/mini object schemas both carry `_zod` and a `shape`.
const isObjectSchema = (value: unknown): value is { shape: Record<string, unknown> } =>
  typeof value === 'object' && value !== null && '_zod' in value && typeof (value as { shape?: unknown }).shape === 'object';

/** Keys of zod object schemas a module exports under a name that says it describes the environment. */
async function environmentSchemaKeys(file: string): Promise<string[]> {
  const module = (await import(pathToFileURL(file).href)) as Record<string, unknown>;
  return Object.entries(module)
    .filter(([name, value]) => /env/i.test(name) && isObjectSchema(value))
    .flatMap(([, value]) => Object.keys((value as { shape: Record<string, unknown> }).shape));
}

/**
 * Every environment variable the code of one built function reads: direct `process.env`
 * reads in any bundled source, plus the keys of exported environment schemas (zod) in lib/.
 * Derived from the bundle's own input list, so a new read anywhere in its code shows up here.
 */
export async function environmentReads(root: string, functionName: string): Promise<Set<string>> {
  const names = new Set<string>();
  for (const source of bundledSources(root, functionName)) {
    const file = join(root, source);
    for (const name of readsInText(readFileSync(file, 'utf8'))) names.add(name);
    // Handlers wire real clients at import time; lib/ modules must not, so they are safe to load.
    if (source.startsWith('lib/')) for (const name of await environmentSchemaKeys(file)) names.add(name);
  }
  return names;
}
