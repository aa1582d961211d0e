// The last word of an operator command on an error nobody expected. Such an error's message and
// stack may quote what the command was reading (a JSON.parse SyntaxError quotes its input, which
// for these commands is a configuration full of passwords and webhook URLs), so only its kind is
// said: its class name and, for system errors, their code.

const SAFE_WORD = /^[A-Za-z][\w.]{0,63}$/;

/** One line in our words: which command failed, and what kind of error it was. */
export function unexpectedErrorMessage(command: string, error: unknown): string {
  const name = error instanceof Error && SAFE_WORD.test(error.name) ? error.name : 'error';
  const code = (error as { code?: unknown } | null | undefined)?.code;
  const kind = typeof code === 'string' && SAFE_WORD.test(code) ? `${name} ${code}` : name;
  return `${command} failed unexpectedly (${kind}). Its details are not shown: they may contain secrets.`;
}

/** Says `unexpectedErrorMessage` and exits 1 for an error that escapes every handler, even one thrown from a callback. */
export function guardUnexpectedErrors(command: string): void {
  const fail = (error: unknown) => {
    process.stderr.write(`${unexpectedErrorMessage(command, error)}\n`);
    process.exit(1);
  };
  process.on('uncaughtException', fail);
  process.on('unhandledRejection', fail);
}
