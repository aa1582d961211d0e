// One esbuild configuration for what is tested, benchmarked and deployed.
import { build } from 'esbuild';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const root = new URL('..', import.meta.url).pathname;
const functions = readdirSync(join(root, 'functions')).filter((name) =>
  existsSync(join(root, 'functions', name, 'handler.ts')),
);

await rm(join(root, 'dist'), { recursive: true, force: true });
for (const name of functions) {
  const outdir = join(root, 'dist', name);
  await mkdir(outdir, { recursive: true });
  const result = await build({
    entryPoints: [join(root, 'functions', name, 'handler.ts')],
    outfile: join(outdir, 'index.mjs'),
    bundle: true,
    platform: 'node',
    format: 'esm',
    // Lambda runs nodejs22.x; local tools and CI run Node 20, so the bundle must run on both.
    target: 'node20',
    minify: true,
    sourcemap: 'linked',
    legalComments: 'none',
    metafile: true,
    // Prefer ESM builds (the AWS SDK ships both) so unused code can be tree-shaken.
    mainFields: ['module', 'main'],
    logLevel: 'warning',
    // Some bundled CommonJS dependencies call require() for Node built-ins.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  });
  await writeFile(join(outdir, 'meta.json'), JSON.stringify(result.metafile));
  console.log(`built dist/${name}/index.mjs`);
}
