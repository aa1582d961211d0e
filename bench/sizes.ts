import { readdirSync, statSync } from 'node:fs';
import { join } from 'node:path';

export interface BundleSize {
  /** index.mjs and every chunk it imports statically, recursively: what a cold start parses. */
  coldPathBytes: number;
  coldPathFiles: string[];
  /** Bytes on the cold path that come from the AWS SDK and its own dependencies. */
  sdkBytes: number;
  /** The biggest contributors to the cold path by package (or by lib/ folder for our own code). */
  largest: Array<{ from: string; bytes: number }>;
  /** Every file of the deployed folder (source maps excluded): what is uploaded, lazy bundles included. */
  folderBytes: number;
}

interface Metafile {
  outputs: Record<
    string,
    {
      bytes: number;
      entryPoint?: string;
      inputs: Record<string, { bytesInOutput: number }>;
      imports: Array<{ path: string; kind: string; external?: boolean }>;
    }
  >;
}

const SDK_PACKAGE = /(?:^|\/)node_modules\/(?:@aws-sdk|@smithy|@aws-crypto|@aws)\//;
export const isSdkOrigin = (from: string) => /^@(aws-sdk|smithy|aws-crypto|aws)\//.test(from);

function origin(input: string): string {
  const packagePath = input.split('node_modules/').at(-1)!;
  if (packagePath !== input) {
    const [scope, name] = packagePath.split('/');
    return scope!.startsWith('@') ? `${scope}/${name}` : scope!;
  }
  return input.split('/').slice(0, 2).join('/');
}

/**
 * Sizes of the bundle in `dir` (index.mjs, its chunks and lazy bundles), attributed to packages
 * through its esbuild metafile. Chunks reached only through `import()` are not on the cold path.
 */
export function bundleSize(dir: string, meta: Metafile): BundleSize {
  const entry = Object.keys(meta.outputs).find((path) => path.endsWith('/index.mjs') && meta.outputs[path]!.entryPoint);
  if (!entry) throw new Error(`the metafile of ${dir} names no index.mjs output`);
  const coldPath = new Set<string>();
  const visit = (path: string) => {
    if (coldPath.has(path)) return;
    const output = meta.outputs[path];
    if (!output) throw new Error(`the metafile of ${dir} names no output ${path}`);
    coldPath.add(path);
    for (const imported of output.imports) if (imported.kind === 'import-statement' && !imported.external) visit(imported.path);
  };
  visit(entry);

  let coldPathBytes = 0;
  let sdkBytes = 0;
  const byOrigin = new Map<string, number>();
  for (const path of coldPath) {
    const output = meta.outputs[path]!;
    coldPathBytes += output.bytes;
    for (const [input, { bytesInOutput }] of Object.entries(output.inputs)) {
      if (SDK_PACKAGE.test(input)) sdkBytes += bytesInOutput;
      byOrigin.set(origin(input), (byOrigin.get(origin(input)) ?? 0) + bytesInOutput);
    }
  }
  const largest = [...byOrigin]
    .sort((a, b) => b[1] - a[1])
    .slice(0, 8)
    .map(([from, bytes]) => ({ from, bytes }));
  const folderBytes = readdirSync(dir)
    .filter((file) => !file.endsWith('.map'))
    .reduce((sum, file) => sum + statSync(join(dir, file)).size, 0);
  return { coldPathBytes, coldPathFiles: [...coldPath].map((path) => path.split('/').at(-1)!), sdkBytes, largest, folderBytes };
}
