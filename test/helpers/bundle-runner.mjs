// Runs one built Lambda bundle in its own Node process, as a Lambda container would:
// module scope once, then one invocation per message. stdout is the function's log.
const { handler } = await import(process.argv[2]);

process.on('message', async (message) => {
  const started = Date.now();
  const context = {
    awsRequestId: message.id,
    functionName: 'test-function',
    getRemainingTimeInMillis: () => Math.max(0, message.timeoutMs - (Date.now() - started)),
  };
  try {
    const result = await handler(message.event, context);
    process.send({ id: message.id, result });
  } catch (error) {
    process.send({ id: message.id, error: String(error && error.stack ? error.stack : error) });
  }
});
process.send({ ready: true });
