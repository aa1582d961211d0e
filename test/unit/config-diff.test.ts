import { describe, expect, it } from 'vitest';
import { configChanges } from '../../lib/config/diff.js';

const base = {
  auth: { method: 'basic', basic: { username: 'relay', password: 'old-pass-1' }, headers: [{ key: 'X-Token', value: 'a1' }] },
  destinations: { default: { url: 'https://hooks.slack.com/services/T/B/old' } },
};

describe('configuration changes, by path only', () => {
  it('names every changed, added and removed leaf, and never a value', () => {
    const next = {
      auth: { method: 'basic', basic: { username: 'relay', password: 'new-pass-2' }, headers: [] },
      destinations: { default: { url: 'https://hooks.slack.com/services/T/B/new' }, 'finops team': { url: 'https://x.logic.azure.com/a' } },
      routes: [{ when: { objectType: ['anomaly_alert'] }, to: ['finops team'] }],
    };
    const changes = configChanges(base, next);
    expect(changes).toEqual([
      { path: 'auth.basic.password', change: 'changed' },
      { path: 'auth.headers[0]', change: 'removed' },
      { path: 'destinations.default.url', change: 'changed' },
      { path: 'destinations["finops team"]', change: 'added' },
      { path: 'routes', change: 'added' },
    ]);
    expect(JSON.stringify(changes)).not.toMatch(/old-pass-1|new-pass-2|hooks\.slack|logic\.azure|"a1"/);
  });

  it('nothing for identical configurations; names from outside are only names', () => {
    expect(configChanges(base, structuredClone(base))).toEqual([]);
    const hostile = JSON.parse('{"destinations":{"__proto__":{"url":"https://a"},"constructor":{"url":"https://b"}}}');
    expect(configChanges({ destinations: {} }, hostile)).toEqual([
      { path: 'destinations.__proto__', change: 'added' },
      { path: 'destinations.constructor', change: 'added' },
    ]);
    expect(configChanges(undefined, base)).toEqual([{ path: '(root)', change: 'changed' }]);
    expect(configChanges({ a: [1, 2] }, { a: [1] })).toEqual([{ path: 'a[1]', change: 'removed' }]);
  });
});
