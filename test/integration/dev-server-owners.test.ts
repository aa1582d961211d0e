// `npm start` reads an owners file (OWNERS_FILE, or the sample) in place of the stack's owner
// directory: one it cannot use stops it before it listens, naming the file and each problem.
import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { runDevServerToExit } from '../helpers/dev-server.js';

function expectStoppedBeforeListening(result: { code: number | null; output: string }): void {
  expect(result.code).toBe(1);
  expect(result.output).not.toContain('listening on');
  expect(result.output).toContain('npm start: the owners file cannot be used, so nothing listens (OWNERS_FILE');
  // Our words, not a stack trace.
  expect(result.output).not.toMatch(/^\s+at /m);
}

describe('npm start refuses an owners file it could not use', () => {
  it('names the file and the path of each problem', async () => {
    const result = await runDevServerToExit({
      prepare: (cwd) =>
        writeFile(join(cwd, 'owners.json'), JSON.stringify({ accounts: { '123456789012': [{ id: '', name: 'Data' }] }, team: 'x' })),
      env: { OWNERS_FILE: 'owners.json' },
    });
    expectStoppedBeforeListening(result);
    expect(result.output).toContain('owners.json is not an owners file ({"accounts": {"<account id>": [{"id", "name", "payer"?}]}})');
    expect(result.output).toContain('accounts.123456789012.0.id: must not be empty');
    expect(result.output).toContain('team: unknown key');
  });

  it('says where its JSON goes wrong, and names a file that is not there', async () => {
    const broken = await runDevServerToExit({
      prepare: (cwd) => writeFile(join(cwd, 'owners.json'), '{\n  "accounts": {\n    "1": [ { "id": "cc-1", "name": Data } ]\n  }\n}\n'),
      env: { OWNERS_FILE: 'owners.json' },
    });
    expectStoppedBeforeListening(broken);
    expect(broken.output).toMatch(/owners\.json is not an owners file .*\n {2}line 3, column \d+: not valid JSON/);
    const missing = await runDevServerToExit({ env: { OWNERS_FILE: 'no-such-owners.json' } });
    expectStoppedBeforeListening(missing);
    expect(missing.output).toContain('Cannot read the owners file no-such-owners.json: ENOENT');
  });
});
