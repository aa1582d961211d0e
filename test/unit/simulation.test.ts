import { describe, expect, it } from 'vitest';
import { runSeed } from '../../sim/simulate.js';

describe('the simulation', () => {
  it('prints the same line for the same seed', async () => {
    const first = await runSeed(7, { days: 2 });
    const second = await runSeed(7, { days: 2 });
    const at = first.traceLines.findIndex((line, i) => line !== second.traceLines[i]);
    expect(second.traceLines.slice(at - 3, at + 3)).toEqual(first.traceLines.slice(at - 3, at + 3));
    expect(second.line).toBe(first.line);
  });
});
