import type { TestProject } from 'vitest/node';
import { motoAvailable, startMoto, type MotoServer } from './helpers/moto.js';

declare module 'vitest' {
  export interface ProvidedContext {
    motoUrl: string | undefined;
  }
}

let moto: MotoServer | undefined;

export async function setup(project: TestProject): Promise<void> {
  if (!motoAvailable()) {
    if (process.env['CI'] === 'true') throw new Error('moto_server is required in CI but is not installed');
    console.warn('\n[notice] moto_server is not installed: tests that need Secrets Manager or SQS are SKIPPED.\n');
    project.provide('motoUrl', undefined);
    return;
  }
  moto = await startMoto();
  project.provide('motoUrl', moto.url);
}

export async function teardown(): Promise<void> {
  await moto?.stop();
}
