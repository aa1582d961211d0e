// Builds every functions/<name>/handler.ts to dist/<name>/index.mjs with the one configuration.
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { bundleOptions } from './esbuild-options.mjs';

const root = new URL('..', import.meta.url).pathname;
const functions = readdirSync(join(root, 'functions')).filter((name) =>
  existsSync(join(root, 'functions', name, 'handler.ts')),
);

await rm(join(root, 'dist'), { recursive: true, force: true });
for (const name of functions) {
  const outdir = join(root, 'dist', name);
  await mkdir(outdir, { recursive: true });
  const result = await build(bundleOptions(join(root, 'functions', name, 'handler.ts'), join(outdir, 'index.mjs')));
  await writeFile(join(outdir, 'meta.json'), JSON.stringify(result.metafile));
  console.log(`built dist/${name}/index.mjs`);
}
