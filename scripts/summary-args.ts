// What `npm run summary` reads from its command line and says about the answer: apart from the
// command itself, so that tests can run them without AWS or a server.
import { parseArgs } from 'node:util';
import { UsageError } from './stack.js';

export const USAGE = `usage:
  npm run summary -- --destination NAME [--destination NAME ...] --stack STACK [--region REGION]
      Posts those destinations' weekly summaries now, through the stack's summary function
      ({"summaryFor": [...]}). The week's scheduled summary still comes at its hour.
  npm run summary -- --destination NAME [--url http://127.0.0.1:3000]
      The same against the relay npm start runs: the anomalies sent to it this session, posted
      to its destinations (the console ones show on its preview page).

Each destination must have a "summary" option in the relay configuration.
Exit codes: 0 posted, 1 not posted (the reason is printed), 2 usage mistake or nothing reachable.`;

export interface SummaryArguments {
  destinations: string[];
  stack?: string | undefined;
  region?: string | undefined;
  url: string;
}

/** The command line, or a UsageError that says what is wrong with it. */
export function summaryArguments(
  args: readonly string[],
  env: Record<string, string | undefined> = process.env,
): SummaryArguments | 'help' {
  let values: { destination?: string[]; stack?: string; region?: string; url?: string; help?: boolean };
  try {
    ({ values } = parseArgs({
      args: [...args],
      options: {
        destination: { type: 'string', multiple: true, short: 'd' },
        stack: { type: 'string' },
        region: { type: 'string' },
        url: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
    }));
  } catch (error) {
    throw new UsageError((error as Error).message);
  }
  if (values.help) return 'help';
  const destinations = (values.destination ?? []).map((name) => name.trim()).filter(Boolean);
  if (destinations.length === 0) throw new UsageError('Name the destination whose summary to post: --destination NAME.');
  if (values.stack !== undefined && values.url !== undefined)
    throw new UsageError('Give --stack (a deployed stack) or --url (npm start), not both.');
  if (values.stack !== undefined && !values.stack.trim()) throw new UsageError('--stack needs the name of a deployed stack.');
  if (values.region !== undefined && values.stack === undefined) throw new UsageError('--region goes with --stack.');
  const url = values.url ?? `http://127.0.0.1:${env['PORT'] ?? 3000}`;
  if (!/^https?:\/\/[^/]+/.test(url)) throw new UsageError(`--url must be the npm start server, such as http://127.0.0.1:3000.`);
  return { destinations, stack: values.stack, region: values.region, url: url.replace(/\/+$/, '') };
}

interface Answer {
  summaries?: Array<{ destination?: unknown; outcome?: unknown; anomalies?: unknown; reason?: unknown }>;
  error?: unknown;
}

/** The answer in lines for the operator, and whether every destination got its summary. */
export function describeAnswer(answer: unknown): { lines: string[]; ok: boolean } {
  const { summaries, error } = (answer ?? {}) as Answer;
  if (typeof error === 'string') return { lines: [error], ok: false };
  if (!Array.isArray(summaries)) return { lines: ['The summary function gave an answer this command cannot read.'], ok: false };
  let ok = summaries.length > 0;
  const lines = summaries.map(({ destination, outcome, anomalies, reason }) => {
    const name = String(destination);
    if (outcome === 'posted') return `${name}: posted, naming ${Number(anomalies)} ${anomalies === 1 ? 'anomaly' : 'anomalies'}`;
    if (outcome === 'quiet') return `${name}: posted, a quiet week (no anomalies)`;
    ok = false;
    return `${name}: not posted (${typeof reason === 'string' ? reason : String(outcome)})`;
  });
  return { lines, ok };
}
