// `npm run send -- events/<file> [--url URL] [--basic user:password] [--bearer TOKEN] [--header "Name: value"]`
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';

const { values, positionals } = parseArgs({
  allowPositionals: true,
  options: {
    url: { type: 'string', default: process.env['RELAY_URL'] ?? 'http://127.0.0.1:3000/webhook' },
    basic: { type: 'string' },
    bearer: { type: 'string' },
    header: { type: 'string', multiple: true, default: [] },
    'content-type': { type: 'string', default: 'application/json' },
  },
});

const file = positionals[0];
if (!file) {
  console.error('usage: npm run send -- events/anomaly-alert.json [--url URL] [--basic user:password] [--bearer TOKEN] [--header "Name: value"]');
  process.exit(2);
}

const headers: Record<string, string> = { 'content-type': values['content-type'] };
if (values.basic) headers['authorization'] = `Basic ${Buffer.from(values.basic).toString('base64')}`;
if (values.bearer) headers['authorization'] = `Bearer ${values.bearer}`;
for (const header of values.header) {
  const colon = header.indexOf(':');
  if (colon > 0) headers[header.slice(0, colon).trim()] = header.slice(colon + 1).trim();
}

try {
  const response = await fetch(values.url, { method: 'POST', headers, body: await readFile(file) });
  console.log(`HTTP ${response.status}`);
  console.log(await response.text());
  process.exitCode = response.ok ? 0 : 1;
} catch (error) {
  console.error(`Could not reach ${values.url}: ${(error as Error).message}. Is the relay running (npm start)?`);
  process.exitCode = 1;
}
