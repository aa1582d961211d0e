import { readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { unsupportedNode } from '../../scripts/check-node.mjs';

const { engines, scripts } = JSON.parse(readFileSync(new URL('../../package.json', import.meta.url), 'utf8')) as {
  engines: { node: string };
  scripts: Record<string, string>;
};

describe('an older Node.js', () => {
  it('is told in one line before npm start and npm test, and npm ci refuses it', () => {
    expect(unsupportedNode('v20.20.2', engines.node)).toMatch(/^Cost Alert Relay needs Node\.js 22\.3\.0 or newer .* this is v20\.20\.2\./);
    expect(unsupportedNode('v22.2.9', engines.node)).toContain('needs Node.js 22.3.0');
    for (const version of ['v22.3.0', 'v22.12.1', 'v24.21.0', 'v30.0.0'])
      expect(unsupportedNode(version, engines.node), version).toBeUndefined();
    expect(scripts['prestart']).toBe('node scripts/check-node.mjs');
    expect(scripts['pretest']).toBe('node scripts/check-node.mjs');
    // npm ci and npm install stop at once on a Node.js that engines does not allow.
    expect(readFileSync(new URL('../../.npmrc', import.meta.url), 'utf8')).toMatch(/^engine-strict=true$/m);
  });
});
