import { existsSync } from 'node:fs';
import type { TestProject } from 'vitest/node';
import { type MotoServer, motoAvailable, startMoto } from './helpers/moto.js';

declare module 'vitest' {
  export interface ProvidedContext {
    motoUrl: string | undefined;
    /** The Chromium that browser tests drive with playwright-core; undefined when none is installed. */
    chromiumPath: string | undefined;
  }
}

let moto: MotoServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  provideChromium(project);
  if (!motoAvailable()) {
    if (process.env['CI'] === 'true') throw new Error('moto_server is required in CI but is not installed');
    console.warn('\n[notice] moto_server is not installed: tests that need Secrets Manager or SQS are SKIPPED.\n');
    project.provide('motoUrl', undefined);
    return;
  }
  moto = await startMoto();
  project.provide('motoUrl', moto.url);
}

// The same rule as for moto: a missing browser skips its tests locally and fails CI.
function provideChromium(project: TestProject): void {
  const path = process.env['CHROMIUM_PATH'] ?? '/usr/bin/chromium';
  if (existsSync(path)) {
    project.provide('chromiumPath', path);
    return;
  }
  if (process.env['CI'] === 'true') throw new Error(`Chromium is required in CI but ${path} does not exist (apt-get install chromium)`);
  console.warn(
    `\n[notice] Chromium is not installed (${path}): the preview page's browser tests are SKIPPED. Debian: apt-get install chromium\n`,
  );
  project.provide('chromiumPath', undefined);
}

export async function teardown(): Promise<void> {
  await moto?.stop();
}
