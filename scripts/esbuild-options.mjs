// The one esbuild configuration for what is tested, benchmarked and deployed. The build and the
// benchmark's floor both use it, so their bundles differ only in their source.

/** esbuild options that bundle `entry` into the self-contained ESM file `outfile`. */
export function bundleOptions(entry, outfile) {
  return {
    entryPoints: [entry],
    outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    // Lambda runs nodejs24.x; local tools need Node 22 or newer, so the bundle must run on both.
    target: 'node22',
    minify: true,
    // A map for debugging by hand, without a sourceMappingURL comment: it is not deployed.
    sourcemap: 'external',
    legalComments: 'none',
    metafile: true,
    // Prefer ESM builds (the AWS SDK ships both) so unused code can be tree-shaken.
    mainFields: ['module', 'main'],
    logLevel: 'warning',
    // Some bundled CommonJS dependencies call require() for Node built-ins.
    banner: { js: "import { createRequire as __cr } from 'node:module'; const require = __cr(import.meta.url);" },
  };
}
