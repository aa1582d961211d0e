// `npm run summary`: posts destinations' weekly summaries now, by invoking a deployed stack's
// summary function, or by asking the running `npm start` (its anomalies in memory, its console
// destinations). Prints what became of each: names, outcomes and reasons, never a URL or a key.
import { parseJson } from '../lib/shared/json.js';
import { InvokeRefusedError, invokeFunction } from './lambda-invoke.js';
import { awsErrorMessage, stackOutputs, UsageError } from './stack.js';
import { describeAnswer, type SummaryArguments, summaryArguments, USAGE } from './summary-args.js';
import { guardUnexpectedErrors, unexpectedErrorMessage } from './unexpected.js';

async function fromStack(args: SummaryArguments): Promise<unknown> {
  const functionName = (await stackOutputs(args.stack as string, args.region))['SummaryFunctionName'];
  if (!functionName)
    throw new UsageError(`The stack ${args.stack} has no SummaryFunctionName output; deploy this version first (npm run deploy).`);
  try {
    const invocation = await invokeFunction(functionName, { summaryFor: args.destinations }, { region: args.region });
    if (invocation.functionError) return { error: `The summary function failed (${invocation.functionError}); its log group says why.` };
    return invocation.result;
  } catch (error) {
    if (error instanceof InvokeRefusedError)
      throw new UsageError(`${error.message} Does your AWS identity have lambda:InvokeFunction on it?`);
    throw new UsageError(`Could not invoke the summary function: ${awsErrorMessage(error)}`);
  }
}

async function fromLocal(args: SummaryArguments): Promise<unknown> {
  let response: Response;
  try {
    response = await fetch(`${args.url}/summary`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ summaryFor: args.destinations }),
      signal: AbortSignal.timeout(30_000),
    });
  } catch {
    throw new UsageError(`Nothing answers at ${args.url}: start the local relay first (npm start), or give --stack STACK.`);
  }
  const parsed = parseJson(await response.text());
  if (response.status === 404 || !parsed.ok) throw new UsageError(`${args.url} is not the npm start of this version (no /summary there).`);
  return parsed.value;
}

async function main(): Promise<number> {
  const args = summaryArguments(process.argv.slice(2));
  if (args === 'help') {
    console.log(USAGE);
    return 0;
  }
  const answer = args.stack ? await fromStack(args) : await fromLocal(args);
  const { lines, ok } = describeAnswer(answer);
  for (const line of lines) (ok ? console.log : console.error)(line);
  return ok ? 0 : 1;
}

guardUnexpectedErrors('npm run summary');
try {
  process.exitCode = await main();
} catch (error) {
  if (error instanceof UsageError) {
    console.error(error.message);
    console.error('Run npm run summary -- --help for the options.');
    process.exitCode = 2;
  } else {
    console.error(unexpectedErrorMessage('npm run summary', error));
    process.exitCode = 1;
  }
}
