// Runs one built Lambda bundle in its own Node process, as a Lambda container would:
// module scope once, then one invocation per message. stdout is the function's log.
//
// The result goes out on stdout too, as one marked line after the invocation's own log
// lines: a single ordered stream, so the test never reads the result before the last log
// line of that invocation has arrived (an IPC reply could overtake buffered stdout).
const MARK = '\u0000invocation\u0000';
const { handler } = await import(process.argv[2]);

const reply = (payload) => process.stdout.write(`${MARK}${JSON.stringify(payload)}\n`);

process.on('message', async (message) => {
  const started = Date.now();
  const context = {
    awsRequestId: message.id,
    functionName: 'test-function',
    getRemainingTimeInMillis: () => Math.max(0, message.timeoutMs - (Date.now() - started)),
  };
  // Lambda ends an invocation at its timeout whatever the handler is doing; so does this, so
  // that "answers before the timeout" is something a test sees rather than measures.
  let timer;
  const timedOut = new Promise((_, reject) => {
    timer = setTimeout(() => reject(new Error(`Task timed out after ${(message.timeoutMs / 1000).toFixed(2)} seconds`)), message.timeoutMs);
  });
  try {
    reply({ id: message.id, result: await Promise.race([handler(message.event, context), timedOut]) });
  } catch (error) {
    reply({ id: message.id, error: String(error?.stack ? error.stack : error) });
  } finally {
    clearTimeout(timer);
  }
});
process.send({ ready: true });
