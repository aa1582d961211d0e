import type { BuildOptions, Metafile, Plugin } from 'esbuild';

export const builtinsWithoutEsmImport: Plugin;
export function bundleOptions(entry: string, outdir: string, lazy?: Set<string>): BuildOptions & { metafile: true };
export function buildFunction(entry: string, outdir: string): Promise<Metafile>;
