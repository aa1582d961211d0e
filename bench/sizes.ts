import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';

export interface BundleSize {
  rawBytes: number;
  gzipBytes: number;
  /** Bytes of the output that come from the AWS SDK and its own dependencies. */
  sdkBytes: number;
  /** The biggest contributors by package (or by lib/ folder for our own code). */
  largest: Array<{ from: string; bytes: number }>;
}

interface Metafile {
  outputs: Record<string, { entryPoint?: string; inputs: Record<string, { bytesInOutput: number }> }>;
}

const SDK_PACKAGE = /(?:^|\/)node_modules\/(?:@aws-sdk|@smithy|@aws-crypto|@aws)\//;

function origin(input: string): string {
  const packagePath = input.split('node_modules/').at(-1)!;
  if (packagePath !== input) {
    const [scope, name] = packagePath.split('/');
    return scope!.startsWith('@') ? `${scope}/${name}` : scope!;
  }
  return input.split('/').slice(0, 2).join('/');
}

/** Sizes of `<dir>/index.mjs`, attributed to packages through its esbuild metafile. */
export function bundleSize(dir: string, metaFile: string): BundleSize {
  const code = readFileSync(join(dir, 'index.mjs'));
  const meta = JSON.parse(readFileSync(metaFile, 'utf8')) as Metafile;
  const output = Object.entries(meta.outputs).find(([path, o]) => o.entryPoint && path.endsWith('index.mjs'))?.[1];
  if (!output) throw new Error(`${metaFile} names no index.mjs output`);
  let sdkBytes = 0;
  const byOrigin = new Map<string, number>();
  for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
    if (SDK_PACKAGE.test(input)) sdkBytes += bytesInOutput;
    byOrigin.set(origin(input), (byOrigin.get(origin(input)) ?? 0) + bytesInOutput);
  }
  const largest = [...byOrigin]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([from, bytes]) => ({ from, bytes }));
  return { rawBytes: code.length, gzipBytes: gzipSync(code, { level: 9 }).length, sdkBytes, largest };
}
