import { createInterface } from 'node:readline';

/** The person stopped answering: Ctrl-C, or the end of the input (Ctrl-D, a closed pipe). */
export class PromptCancelled extends Error {
  override name = 'PromptCancelled';
  constructor(readonly how: 'interrupt' | 'end of input') {
    super(`questions stopped (${how})`);
  }
}

/**
 * Questions on stderr (stdout stays for results). In a terminal, secrets are not echoed; from a
 * pipe every answer is one line, for scripted use. Ctrl-C or the end of the input rejects with
 * PromptCancelled, so a caller can stop before it has done anything with half the answers.
 */
export interface Asker {
  ask(question: string): Promise<string>;
  askSecret(question: string): Promise<string>;
  close(): void;
}

export function createAsker(): Asker {
  return process.stdin.isTTY ? terminalAsker() : lineAsker();
}

/**
 * Asks for the platform credentials on stderr (stdout stays for the result). In a terminal the
 * password is not echoed; from a pipe both answers are read as lines, for scripted use.
 */
export async function promptCredentials(): Promise<{ username: string; password: string }> {
  const asker = createAsker();
  let username = '';
  try {
    username = await asker.ask('Platform username (e-mail): ');
    const password = await asker.askSecret(process.stdin.isTTY ? 'Platform password (not shown): ' : 'Platform password: ');
    return { username, password };
  } catch (error) {
    // Stopped half-way: the caller says what is missing.
    if (error instanceof PromptCancelled) return { username, password: '' };
    throw error;
  } finally {
    asker.close();
  }
}

function lineAsker(): Asker {
  const rl = createInterface({ input: process.stdin, terminal: false });
  const lines = rl[Symbol.asyncIterator]();
  const next = async (question: string): Promise<string> => {
    process.stderr.write(question);
    const line = await lines.next();
    process.stderr.write('\n');
    if (line.done) throw new PromptCancelled('end of input');
    return String(line.value);
  };
  return {
    ask: async (question) => (await next(question)).trim(),
    askSecret: next,
    // Done asking: stop reading, so that an input left open does not keep the process alive.
    close: () => {
      rl.close();
      process.stdin.destroy();
    },
  };
}

function terminalAsker(): Asker {
  return { ask: askVisible, askSecret: askHidden, close: () => undefined };
}

function askVisible(question: string): Promise<string> {
  const rl = createInterface({ input: process.stdin, output: process.stderr, terminal: true });
  return new Promise((resolve, reject) => {
    let answered = false;
    rl.on('SIGINT', () => {
      answered = true;
      process.stderr.write('\n');
      rl.close();
      reject(new PromptCancelled('interrupt'));
    });
    rl.on('close', () => {
      if (answered) return;
      process.stderr.write('\n');
      reject(new PromptCancelled('end of input'));
    });
    rl.question(question, (answer) => {
      answered = true;
      rl.close();
      resolve(answer.trim());
    });
  });
}

function askHidden(question: string): Promise<string> {
  const stdin = process.stdin;
  // Echo off before the question shows: an answer typed the moment it appears is not echoed.
  stdin.setRawMode(true);
  process.stderr.write(question);
  return new Promise((resolve, reject) => {
    let value = '';
    const done = (result: () => void) => {
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdin.setRawMode(false);
      stdin.pause();
      process.stderr.write('\n');
      result();
    };
    const onEnd = () => done(() => reject(new PromptCancelled('end of input')));
    const onData = (chunk: string) => {
      for (const ch of chunk) {
        if (ch === '\r' || ch === '\n') return done(() => resolve(value));
        if (ch === '\u0003') return done(() => reject(new PromptCancelled('interrupt')));
        if (ch === '\u0004') return done(() => reject(new PromptCancelled('end of input')));
        if (ch === '\u007f' || ch === '\b') value = value.slice(0, -1);
        else if (ch >= ' ') value += ch;
      }
    };
    stdin.setEncoding('utf8');
    stdin.on('data', onData);
    stdin.on('end', onEnd);
    stdin.resume();
  });
}
