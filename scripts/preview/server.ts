// The preview page's routes on the `npm start` server: `/`, `/deliveries.json` and the page's
// own files. The Adaptive Cards renderer comes from node_modules, so the page works offline.
import { readFile } from 'node:fs/promises';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { createRequire } from 'node:module';
import { isIP } from 'node:net';
import type { DeliveryLog } from './deliveries.js';
import { previewPage } from './render.js';

// Scripts and styles only from files this server serves: a message that slipped past the
// escaping still could not run, load or send anything.
export const CONTENT_SECURITY_POLICY = [
  "default-src 'none'",
  "script-src 'self'",
  "style-src 'self'",
  "img-src 'self' data:",
  "connect-src 'self'",
  "base-uri 'none'",
  "form-action 'none'",
  "frame-ancestors 'none'",
].join('; ');

const SECURITY_HEADERS = {
  'content-security-policy': CONTENT_SECURITY_POLICY,
  'referrer-policy': 'no-referrer',
  'cache-control': 'no-store',
  'x-content-type-options': 'nosniff',
  'cross-origin-resource-policy': 'same-origin',
  'cross-origin-opener-policy': 'same-origin',
};

const require = createRequire(import.meta.url);
const here = (file: string) => new URL(file, import.meta.url);

const FILES: Record<string, { file: () => string | URL; type: string }> = {
  '/preview/page.js': { file: () => here('./page.js'), type: 'text/javascript; charset=utf-8' },
  '/preview/page.css': { file: () => here('./page.css'), type: 'text/css; charset=utf-8' },
  '/preview/adaptivecards.js': {
    file: () => require.resolve('adaptivecards/dist/adaptivecards.min.js'),
    type: 'text/javascript; charset=utf-8',
  },
};

export function isPreviewPath(path: string): boolean {
  return path === '/' || path === '/deliveries.json' || path === '/favicon.ico' || Object.hasOwn(FILES, path);
}

/**
 * A page on loopback can still be read by a web site through DNS rebinding (its own name
 * pointed at 127.0.0.1); such a request names that site in Host. An IP address or
 * `localhost` cannot be rebound, so only those are served.
 */
function hostAllowed(req: IncomingMessage): boolean {
  const host = req.headers.host ?? '';
  const name = host.startsWith('[') ? host.slice(1, host.indexOf(']')) : host.replace(/:\d+$/, '');
  return isIP(name) !== 0 || name === 'localhost' || name.endsWith('.localhost');
}

export async function handlePreviewRequest(path: string, req: IncomingMessage, res: ServerResponse, log: DeliveryLog): Promise<void> {
  const send = (status: number, type: string, body: string | Buffer) =>
    res.writeHead(status, { ...SECURITY_HEADERS, 'content-type': type }).end(req.method === 'HEAD' ? undefined : body);
  if (req.method !== 'GET' && req.method !== 'HEAD') {
    res.setHeader('allow', 'GET, HEAD');
    send(405, 'text/plain; charset=utf-8', 'Method Not Allowed');
    return;
  }
  if (!hostAllowed(req)) {
    send(421, 'text/plain; charset=utf-8', 'Open the preview through an IP address or localhost.');
    return;
  }
  if (path === '/') {
    send(200, 'text/html; charset=utf-8', previewPage(log.list(), log.latestId(), log.limit));
    return;
  }
  if (path === '/deliveries.json') {
    send(200, 'application/json; charset=utf-8', JSON.stringify({ latest: log.latestId(), deliveries: log.list() }));
    return;
  }
  if (path === '/favicon.ico') {
    // Browsers ask for one; "none" is an answer, where a 404 would be an error in the console.
    res.writeHead(204, SECURITY_HEADERS).end();
    return;
  }
  const asset = FILES[path];
  if (!asset) {
    send(404, 'text/plain; charset=utf-8', 'Not Found');
    return;
  }
  try {
    send(200, asset.type, await readFile(asset.file()));
  } catch (error) {
    console.error(`preview page: cannot serve ${path}: ${(error as Error).message}`);
    send(500, 'text/plain; charset=utf-8', 'Cannot read this file; is node_modules installed (npm ci)?');
  }
}
