import { readdirSync, readFileSync } from 'node:fs';
import { describe, expect, it } from 'vitest';
import { lowestAllowed as lowestOf } from '../../scripts/check-node.mjs';

const root = new URL('../../', import.meta.url);
const packageJson = JSON.parse(readFileSync(new URL('package.json', root), 'utf8')) as { engines: { node: string } };

/** The lowest version `>=X.Y.Z` allows, as numbers: the same reading npm start's check makes. */
function lowestAllowed(range: string): number[] {
  const lowest = lowestOf(range);
  if (!lowest) throw new Error(`engines.node is not a plain lower bound: ${range}`);
  return lowest;
}
const atLeast = (version: number[], floor: number[]) => {
  for (let i = 0; i < floor.length; i++) if ((version[i] ?? 0) !== floor[i]) return (version[i] ?? 0) > (floor[i] ?? 0);
  return true;
};

// APIs the bundles call, and the Node.js release that brought each.
const NEEDS: Array<{ api: string; since: number[] }> = [{ api: 'process.getBuiltinModule', since: [22, 3, 0] }];

describe('package.json engines', () => {
  it('allows no Node.js older than what the built bundles call', () => {
    const lowest = lowestAllowed(packageJson.engines.node);
    const dist = new URL('dist/', root);
    for (const fn of readdirSync(dist)) {
      for (const file of readdirSync(new URL(`${fn}/`, dist)).filter((name) => name.endsWith('.mjs'))) {
        const code = readFileSync(new URL(`${fn}/${file}`, dist), 'utf8');
        for (const need of NEEDS) {
          if (code.includes(need.api))
            expect(atLeast(lowest, need.since), `${fn}/${file} calls ${need.api} (Node ${need.since.join('.')})`).toBe(true);
        }
      }
    }
  });
});
