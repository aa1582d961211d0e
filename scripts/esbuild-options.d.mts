import type { BuildOptions } from 'esbuild';

export function bundleOptions(entry: string, outfile: string): BuildOptions & { metafile: true };
