import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { webhookMessageSchema } from '../../lib/message/schema.js';
import { ownersFileSchema } from '../../lib/owners/directory.js';

const dir = new URL('../../events/', import.meta.url);
const read = (name: string) => readFileSync(new URL(name, dir), 'utf8');

describe('sample events', () => {
  it('good samples are valid messages, bad ones are not', () => {
    for (const name of readdirSync(dir).filter((f) => f.endsWith('.json'))) {
      expect(webhookMessageSchema.safeParse(JSON.parse(read(name))).success, name).toBe(true);
    }
    for (const name of readdirSync(new URL('bad/', dir)).filter((f) => f.endsWith('.json') && f !== 'hostile-text.json')) {
      expect(webhookMessageSchema.safeParse(JSON.parse(read(`bad/${name}`))).success, name).toBe(false);
    }
  });

  it("the sample owners file is an owners file, and covers the anomaly sample's account", () => {
    const owners = ownersFileSchema.parse(JSON.parse(read('owners/sample.json')));
    const account = String(JSON.parse(read('anomaly-alert.json')).payload.account_id);
    expect(owners.accounts[account]?.map((c) => c.name)).toContain('Data Platform');
  });

  it('the sam local event carries exactly the anomaly sample as its body', () => {
    const event = JSON.parse(read('sam/anomaly-alert.http-api.json'));
    expect(event.version).toBe('2.0');
    expect(event.requestContext.http.method).toBe('POST');
    expect(JSON.parse(event.body)).toEqual(JSON.parse(read('anomaly-alert.json')));
  });
});
