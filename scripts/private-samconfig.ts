// How `npm run deploy` hands sam its parameters, the NoEcho ones (webhook URL, platform password)
// included: in a copy of samconfig.toml that only this user can read, never on sam's command
// line, which every local user can read (ps, /proc/<pid>/cmdline). The copy lives while sam
// runs and is removed after it, whatever ends the run: sam's exit, an error, a signal.
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { mkdtemp, open, rm } from 'node:fs/promises';
import { constants, tmpdir } from 'node:os';
import { join } from 'node:path';
import { UsageError } from './stack.js';

const DEPLOY_SECTION = 'default.deploy.parameters';
const TABLE_HEADER = /^\s*\[([^\]]+)\]\s*$/;
const OVERRIDES_KEY = /^\s*parameter_overrides\s*=/;
/** The one form of parameter_overrides the deploy reads (deploy.ts, readSamconfig) and writes: a one-line basic string. */
const OVERRIDES_LINE = /^\s*parameter_overrides\s*=\s*"(?:[^"\\]|\\.)*"\s*$/;

/** A TOML basic string: JSON's escapes are TOML's too, and DEL, which JSON leaves as it is, must be escaped. */
const tomlString = (value: string) => JSON.stringify(value).replaceAll('\u007f', '\\u007f');

/**
 * samconfig.toml as sam is to read it for one deploy: the file as it is (so every setting in it
 * still applies), with `overrides` as the deploy section's parameter_overrides. A line the
 * deploy could not read is refused rather than replaced: what it holds would be lost.
 */
export function samconfigWithOverrides(text: string, overrides: string): string {
  if (!overrides) return text;
  const lines = text.split(/\r?\n/);
  let section = '';
  let header = -1;
  let found = -1;
  for (const [i, line] of lines.entries()) {
    const table = TABLE_HEADER.exec(line);
    if (table) {
      section = (table[1] as string).trim();
      if (section === DEPLOY_SECTION) header = i;
    } else if (section === DEPLOY_SECTION && OVERRIDES_KEY.test(line)) {
      found = i;
    }
  }
  const setting = `parameter_overrides = ${tomlString(overrides)}`;
  if (found >= 0) {
    if (!OVERRIDES_LINE.test(lines[found] as string))
      throw new UsageError(
        'samconfig.toml has parameter_overrides in a form npm run deploy does not read (it reads one quoted line of Key=\\"value\\" pairs, as it writes them). Write it on one line that way, then run npm run deploy again.',
      );
    lines[found] = setting;
  } else if (header >= 0) {
    lines.splice(header + 1, 0, setting);
  } else {
    const end = lines.at(-1) === '' ? lines.length - 1 : lines.length;
    lines.splice(end, 0, '', `[${DEPLOY_SECTION}]`, setting);
  }
  return lines.join('\n');
}

/** How sam ended: its exit code, or the signal that stopped this deploy while sam ran. */
export type SamExit = { code: number; signal?: NodeJS.Signals };

const SIGNALS: readonly NodeJS.Signals[] = ['SIGINT', 'SIGTERM', 'SIGHUP'];

/**
 * Runs sam with `config` in a file only this user can read: created exclusively (mode 0600) in a
 * fresh private directory (mkdtemp makes it 0700), its path given to `args`. The directory is
 * removed when sam exits, at once on a signal, and on any exit of this process.
 */
export async function runSamWithPrivateConfig(sam: string, args: (configFile: string) => string[], config: string): Promise<SamExit> {
  const dir = await mkdtemp(join(tmpdir(), 'cost-alert-relay-deploy-'));
  const removeNow = () => rmSync(dir, { recursive: true, force: true });
  process.on('exit', removeNow);
  try {
    const file = join(dir, 'samconfig.toml');
    const handle = await open(file, 'wx', 0o600);
    try {
      await handle.writeFile(config);
    } finally {
      await handle.close();
    }
    return await runSam(sam, args(file), removeNow);
  } finally {
    await rm(dir, { recursive: true, force: true });
    process.off('exit', removeNow);
  }
}

/**
 * sam, waited for without blocking this process: a signal meanwhile reaches `onSignal` (a
 * synchronous wait would let the signal end this process before any cleanup ran).
 */
function runSam(sam: string, args: string[], onSignal: () => void): Promise<SamExit> {
  return new Promise((resolve) => {
    const child = spawn(sam, args, { stdio: 'inherit' });
    let stoppedBy: NodeJS.Signals | undefined;
    const stop = (signal: NodeJS.Signals) => {
      stoppedBy ??= signal;
      onSignal();
      // Ctrl-C in a terminal reaches sam itself (one process group); a second one would cut
      // short its own clean-up. Other signals may have been sent to this process alone.
      if (signal !== 'SIGINT') child.kill(signal);
    };
    let settled = false;
    const done = (code: number) => {
      if (settled) return;
      settled = true;
      for (const signal of SIGNALS) process.off(signal, stop);
      resolve(stoppedBy ? { code: 128 + constants.signals[stoppedBy], signal: stoppedBy } : { code });
    };
    for (const signal of SIGNALS) process.on(signal, stop);
    child.on('error', () => done(127));
    child.on('close', (code, signal) => {
      // Ctrl-C reaches sam and this process together: sam may end from it before this process's
      // handler has run. An end by SIGINT, or with its exit status, is that same Ctrl-C.
      if (signal === 'SIGINT' || code === 128 + constants.signals.SIGINT) stoppedBy ??= 'SIGINT';
      done(code ?? 128 + (signal ? constants.signals[signal] : 0));
    });
  });
}
