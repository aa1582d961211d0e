import { createInterface } from 'node:readline';

/**
 * Asks for the platform credentials on stderr (stdout stays for the result). In a terminal the
 * password is not echoed; from a pipe both answers are read as lines, for scripted use.
 */
export async function promptCredentials(): Promise<{ username: string; password: string }> {
  if (process.stdin.isTTY) {
    const username = await askVisible('Platform username (e-mail): ');
    const password = await askHidden('Platform password (not shown): ');
    return { username, password };
  }
  const lines = createInterface({ input: process.stdin, terminal: false })[Symbol.asyncIterator]();
  process.stderr.write('Platform username (e-mail): ');
  const username = (await lines.next()).value ?? '';
  process.stderr.write('\nPlatform password: ');
  const password = (await lines.next()).value ?? '';
  process.stderr.write('\n');
  await lines.return?.();
  return { username: String(username).trim(), password: String(password) };
}

function askVisible(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve) =>
    rl.question(question, (answer) => {
      rl.close();
      resolve(answer.trim());
    }),
  );
}

function askHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (result: () => void) => {
      stdin.off('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      result();
    };
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(() => resolve(value));
        if (ch === '\u0003' || ch === '\u0004') return done(() => reject(new Error('cancelled')));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.setRawMode(true);
    stdin.setEncoding('utf8');
    stdin.on('data', onData);
    stdin.resume();
  });
}
