import type { BuildOptions, Plugin } from 'esbuild';

export const builtinsWithoutEsmImport: Plugin;
export function bundleOptions(entry: string, outdir: string): BuildOptions & { metafile: true };
