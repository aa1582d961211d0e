// Builds every functions/<name>/handler.ts to dist/<name>/index.mjs (and the chunks it imports)
// with the one configuration.
import { existsSync, readdirSync } from 'node:fs';
import { copyFile, mkdir, readdir, rename, rm, writeFile } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { join } from 'node:path';
import chartAssets from '../lib/chart/assets.json' with { type: 'json' };
import { buildFunction } from './esbuild-options.mjs';

const require = createRequire(import.meta.url);

const root = new URL('..', import.meta.url).pathname;
const functions = readdirSync(join(root, 'functions')).filter((name) => existsSync(join(root, 'functions', name, 'handler.ts')));

// dist/<name>/ is exactly what the template deploys, so the esbuild metafile (for the size
// figures and template checks) and the source maps live apart, in dist/meta/.
const metaDir = join(root, 'dist', 'meta');
await rm(join(root, 'dist'), { recursive: true, force: true });
await mkdir(metaDir, { recursive: true });
for (const name of functions) {
  const outdir = join(root, 'dist', name);
  const metafile = await buildFunction(join(root, 'functions', name, 'handler.ts'), outdir);
  await writeFile(join(metaDir, `${name}.json`), JSON.stringify(metafile));
  const maps = join(metaDir, `${name}.maps`);
  await mkdir(maps, { recursive: true });
  for (const file of await readdir(outdir)) {
    if (file.endsWith('.map')) await rename(join(outdir, file), join(maps, file));
  }
  // A function whose bundle draws pictures gets the files its rasteriser reads, beside it (lib/chart/assets.ts).
  if (existsSync(join(outdir, 'lazy-chart-render.mjs'))) {
    for (const asset of chartAssets) await copyFile(require.resolve(asset.from), join(outdir, asset.file));
  }
  console.log(`built dist/${name}/index.mjs`);
}
