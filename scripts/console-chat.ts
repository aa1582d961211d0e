// The console destinations of `npm start`: each destination kind plays its service on loopback
// and prints what the service would show (lib/notify/<kind>/tools.ts); the preview
// page (scripts/preview) shows the same deliveries in a browser.
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { KindTools } from '../lib/notify/kind.js';
import { DESTINATION_TYPES, type DestinationType, typeFromUrl } from '../lib/notify/kinds.js';
import { allKindTools } from '../lib/notify/tools.js';
import { parseJson } from '../lib/shared/json.js';

export const CONSOLE_TYPES = DESTINATION_TYPES;
export type ConsoleType = DestinationType;

/** Every kind's tools, loaded once: the console and the preview page ask them. */
export async function loadKindTools(): Promise<Readonly<Record<ConsoleType, KindTools>>> {
  return allKindTools();
}

/**
 * The console a request path asks for: `/console/<type>` and what follows it (Slack's Web API
 * at `/console/slack/api/<method>`); plain `/console` is the kind a URL of no known host is.
 */
export function consolePathOf(path: string): { type: ConsoleType; rest: string } | undefined {
  if (path === '/console') return { type: typeFromUrl('http://127.0.0.1/console'), rest: '' };
  const found = /^\/console\/([a-z]+)(\/.*)?$/.exec(path);
  const type = CONSOLE_TYPES.find((t) => t === found?.[1]);
  return type ? { type, rest: found?.[2] ?? '' } : undefined;
}

/** The environment `npm start` sets for the kinds' posts to reach their consoles, unless set already. */
export function consoleEnvironment(tools: Readonly<Record<ConsoleType, KindTools>>, base: string): Record<string, string> {
  return Object.assign({}, ...CONSOLE_TYPES.map((type) => tools[type].consoleEnvironment?.(base) ?? {}));
}

/**
 * Handles the requests to every console path: prints the preview, answers as the service
 * would, and records what the preview page shows. One console per kind for the whole session,
 * since a Web API's messages outlive one request.
 */
export function createConsoles(
  tools: Readonly<Record<ConsoleType, KindTools>>,
  print: (text: string) => void = console.log,
  /** Told of each post the preview page shows, with where it was received (deliveries.ts, destinationsAt). */
  record?: (type: ConsoleType, body: unknown, at: { pathAndQuery: string; channel?: string | undefined }) => void,
) {
  const consoles = new Map(CONSOLE_TYPES.map((type) => [type, tools[type].createConsole()]));
  return (target: { type: ConsoleType; rest: string }, req: IncomingMessage, res: ServerResponse, body: Buffer): void => {
    if (req.method !== 'POST') {
      res.writeHead(405).end();
      return;
    }
    const parsed = parseJson(body.toString('utf8'));
    if (!parsed.ok) {
      res.writeHead(400, { 'content-type': 'text/plain' }).end('invalid_payload');
      return;
    }
    const answer = consoles.get(target.type)!(target.rest, parsed.value);
    for (const line of answer.show) print(line);
    if (answer.record !== undefined) {
      const channel = (parsed.value as { channel?: unknown } | null)?.channel;
      record?.(target.type, answer.record, {
        pathAndQuery: req.url ?? '',
        ...(typeof channel === 'string' ? { channel } : {}),
      });
    }
    res.writeHead(answer.status, answer.headers).end(answer.body ?? '');
  };
}
