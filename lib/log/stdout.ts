let pending = '';
let queued = false;

function flush(): void {
  queued = false;
  if (pending === '') return;
  const text = pending;
  pending = '';
  process.stdout.write(text);
}

// A line still pending when the process exits (process.exit, a crash) is written all the same.
process.once('exit', flush);

/**
 * Writes a line to stdout, the lines of one synchronous stretch together: a delivery's log
 * line and the answer's metric lines cost one write, not three (each write to stdout is a
 * system call on the warm path; bench/README.md has what it cost). The write happens in a
 * microtask queued by the first line, before anything that awaits the current code, so
 * lines never arrive after the invocation's answer.
 */
export function writeStdoutLine(line: string): void {
  pending += line.endsWith('\n') ? line : `${line}\n`;
  if (queued) return;
  queued = true;
  queueMicrotask(flush);
}
