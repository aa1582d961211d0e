// The one esbuild configuration for what is tested, benchmarked and deployed. The build and the
// benchmark's floors all use it, so their bundles differ only in their source.
import { builtinModules } from 'node:module';

const BUILTINS = new Set(builtinModules);
const BUILTIN_NAMESPACE = 'node-builtin';

/**
 * Loads Node built-ins through `process.getBuiltinModule` instead of an ESM `import`. An ESM
 * import of a built-in builds a namespace of all its exports, which runs every lazy getter:
 * `node:http`'s `WebSocket` getter alone loads undici (nodejs/node#57649), 27–80 ms and
 * megabytes of a cold start on Node 22 and 24 that nothing here uses.
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
 * esbuild options that bundle `entry` into `outdir/index.mjs`, with the chunks it imports
 * beside it (the folder is what is deployed). Code that is imported dynamically (the SDK's
 * credential chain, SQS, JOSE) sits in chunks that a cold start without them never parses.
 */
export function bundleOptions(entry, outdir) {
  return {
    entryPoints: { index: entry },
    outdir,
    outExtension: { '.js': '.mjs' },
    chunkNames: 'chunk-[hash]',
    splitting: true,
    bundle: true,
    platform: 'node',
    format: 'esm',
    // Lambda runs nodejs24.x; local tools need Node 22 or newer, so the bundle must run on both.
    target: 'node22',
    minify: true,
    // Maps for debugging by hand, without a sourceMappingURL comment: they are not deployed.
    sourcemap: 'external',
    legalComments: 'none',
    metafile: true,
    // Prefer ESM builds (the AWS SDK ships both) so unused code can be tree-shaken.
    mainFields: ['module', 'main'],
    logLevel: 'warning',
    plugins: [builtinsWithoutEsmImport],
    // Bundled CommonJS dependencies may call require(); built without an ESM import of node:module.
    banner: { js: "const require = process.getBuiltinModule('node:module').createRequire(import.meta.url);" },
  };
}
