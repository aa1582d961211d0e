// The one esbuild configuration for what is tested, benchmarked and deployed. The build and the
// benchmark's floors all use it, so their bundles differ only in their source.

import { readFile } from 'node:fs/promises';
import { builtinModules } from 'node:module';
import { basename, dirname, join } from 'node:path';
import { build } from 'esbuild';

const BUILTINS = new Set(builtinModules);
const BUILTIN_NAMESPACE = 'node-builtin';

/**
 * Loads Node built-ins through `process.getBuiltinModule` instead of an ESM `import`. An ESM
 * import of a built-in builds a namespace of all its exports, which runs every lazy getter:
 * `node:http`'s `WebSocket` getter alone loads undici (nodejs/node#57649) on every cold start
 * on Node 22 and 24, time and memory for something nothing here uses (bench/README.md).
 */
export const builtinsWithoutEsmImport = {
  name: 'builtins-without-esm-import',
  setup(build) {
    build.onResolve({ filter: /^(?:node:)?[a-z_][a-z0-9_/]*$/ }, (args) => {
      const name = args.path.replace(/^node:/, '');
      if (!args.path.startsWith('node:') && !BUILTINS.has(name)) return undefined;
      return { path: `node:${name}`, namespace: BUILTIN_NAMESPACE };
    });
    // A CommonJS module to esbuild: importers get `__toESM(require_x())`, whose properties are read when used.
    build.onLoad({ filter: /.*/, namespace: BUILTIN_NAMESPACE }, (args) => ({
      contents: `module.exports = process.getBuiltinModule(${JSON.stringify(args.path)});`,
      loader: 'js',
    }));
  },
};

/**
 * @slack/webhook reads its package.json for the user agent's name and version only; bundled
 * whole, its scripts, keywords and dependency lists would be parsed on every cold start.
 */
const slackWebhookManifest = {
  name: 'slack-webhook-manifest',
  setup(build) {
    build.onLoad({ filter: /[\\/]node_modules[\\/]@slack[\\/]webhook[\\/]package\.json$/ }, async (args) => {
      const { name, version } = JSON.parse(await readFile(args.path, 'utf8'));
      return { contents: JSON.stringify({ name, version }), loader: 'json' };
    });
  },
};

/**
 * @slack/webhook wraps every send in p-retry, which bundles `retry` with it: 4.5 KB parsed on
 * every cold start for retries we never ask for. The delivery core decides retries, so the
 * poster keeps @slack/webhook's default of none (lib/notify/slack/post.ts), and one attempt is
 * all p-retry does. This is that attempt, with p-retry's own surface for it: `AbortError`, and
 * a rejection with the error an AbortError wraps. Asked for retries, it refuses loudly.
 */
const singleAttemptPRetry = {
  name: 'single-attempt-p-retry',
  setup(build) {
    build.onResolve({ filter: /^p-retry$/ }, (args) =>
      /[\\/]@slack[\\/]webhook[\\/]/.test(args.importer) ? { path: 'p-retry', namespace: 'single-attempt-p-retry' } : undefined,
    );
    build.onLoad({ filter: /.*/, namespace: 'single-attempt-p-retry' }, () => ({
      contents: `class AbortError extends Error {
  constructor(cause) { super(cause instanceof Error ? cause.message : String(cause)); this.name = 'AbortError'; this.originalError = cause instanceof Error ? cause : new Error(String(cause)); }
}
async function pRetry(attempt, options) {
  if (options && options.retries) throw new Error('p-retry is bundled for a single attempt; the delivery core retries');
  try { return await attempt(1); } catch (error) { throw error instanceof AbortError ? error.originalError : error; }
}
module.exports = pRetry; module.exports.default = pRetry; module.exports.AbortError = AbortError;`,
      loader: 'js',
    }));
  },
};

/**
 * The file a package that is imported dynamically is bundled to, beside the importer. Our own
 * lazy module is `lazy-<folder>.mjs`, or its own name when it is `lazy-<folder>-<part>.ts`, so a
 * folder may hold several (a destination kind's extras beside its other lazy code).
 */
const lazyFileName = (specifier) => {
  if (!isOwnLazyModule(specifier)) return `lazy-${specifier.replace(/^@/, '').replace(/[^a-zA-Z0-9]+/g, '-')}.mjs`;
  const folder = basename(dirname(specifier));
  const file = basename(specifier, '.js');
  return file.startsWith(`lazy-${folder}-`) ? `${file}.mjs` : `lazy-${folder}.mjs`;
};

/**
 * Our own module whose file name starts with `lazy-` (lib/group/lazy-relay.ts) is bundled on
 * its own like a package: with esbuild's code splitting, every module it shares with the cold
 * path would move into a chunk of its own, and the imports and exports between the chunks
 * would grow the cold path by kilobytes.
 */
const isOwnLazyModule = (specifier) => /^(?:\.\.?\/|\/).*\/lazy-[^/]+\.js$/.test(specifier);

/**
 * A package imported with `import()` (SQS, the SDK's credential chain, JOSE) becomes a bundle
 * of its own, `lazy-<package>.mjs`, built separately. esbuild's own code splitting would put
 * the files such a package shares with the cold path (the SDK's barrel modules, large even
 * for SigV4 alone) into chunks that the cold path imports; a separate bundle keeps every byte of
 * it off the cold path, at the price of a second copy of what they share.
 */
function lazyPackages(found) {
  return {
    name: 'lazy-packages',
    setup(build) {
      build.onResolve({ filter: /^[^./]/ }, (args) => {
        if (args.kind !== 'dynamic-import') return undefined;
        found.add(args.path);
        return { path: `./${lazyFileName(args.path)}`, external: true };
      });
      build.onResolve({ filter: /\/lazy-[^/]+\.js$/ }, (args) => {
        if (args.kind !== 'dynamic-import') return undefined;
        const absolute = join(args.resolveDir, args.path);
        found.add(absolute);
        return { path: `./${lazyFileName(absolute)}`, external: true };
      });
    },
  };
}

/**
 * esbuild options that bundle `entry` into `outdir/index.mjs`, with the chunks it imports
 * beside it (the folder is what is deployed). Packages it imports dynamically are added to
 * `lazy`, for buildFunction to bundle.
 */
export function bundleOptions(entry, outdir, lazy = new Set()) {
  return {
    entryPoints: { index: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    // Lambda runs nodejs24.x; local tools need Node 22.3 or newer (process.getBuiltinModule), so the bundle must run on both.
    target: 'node22',
    minify: true,
    // Maps for debugging by hand, without a sourceMappingURL comment: they are not deployed.
    sourcemap: 'external',
    legalComments: 'none',
    metafile: true,
    // Prefer ESM builds (the AWS SDK ships both) so unused code can be tree-shaken.
    mainFields: ['module', 'main'],
    logLevel: 'warning',
    plugins: [builtinsWithoutEsmImport, slackWebhookManifest, singleAttemptPRetry, lazyPackages(lazy)],
    // Bundled CommonJS dependencies may call require(); built without an ESM import of node:module.
    banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  };
}

/**
 * Builds one function (or a benchmark floor): `entry` to `outdir/index.mjs`, then every
 * package it imports dynamically, and theirs, each to its own `lazy-*.mjs`. Returns the
 * esbuild metafile of all of them.
 */
export async function buildFunction(entry, outdir) {
  // A Set visits what is added while it is iterated, once each: the lazy packages' own lazy packages too.
  const lazy = new Set();
  const options = bundleOptions(entry, outdir, lazy);
  const { metafile } = await build(options);
  for (const specifier of lazy) {
    const result = await build({
      ...options,
      entryPoints: undefined,
      outdir: undefined,
      splitting: false,
      outfile: join(outdir, lazyFileName(specifier)),
      // A source name that is no file: the metafile's inputs list real files and this.
      stdin: { contents: `export * from ${JSON.stringify(specifier)};`, resolveDir: dirname(entry), sourcefile: `lazy:${specifier}` },
    });
    Object.assign(metafile.inputs, result.metafile.inputs);
    Object.assign(metafile.outputs, result.metafile.outputs);
  }
  return metafile;
}
