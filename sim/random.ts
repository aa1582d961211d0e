/**
 * The simulation's one source of chance: a small, fast PRNG (sfc32) seeded from the run's seed, so
 * that a seed replays exactly. Every draw of the workload, the faults and the stand-ins comes from
 * here (each from its own stream, so that a change in one does not shift the others).
 */
export interface Random {
  /** In [0, 1). */
  next(): number;
  /** An integer in [min, max]. */
  int(min: number, max: number): number;
  chance(p: number): boolean;
  pick<T>(items: readonly T[]): T;
  /** A stream of its own, named: draws from it do not shift this one's. */
  fork(name: string): Random;
}

function hash(text: string): number {
  // FNV-1a, 32 bits.
  let h = 0x811c9dc5;
  for (let i = 0; i < text.length; i++) {
    h ^= text.charCodeAt(i);
    h = Math.imul(h, 0x01000193);
  }
  return h >>> 0;
}

export function seeded(seed: number | string): Random {
  let a = hash(`a${seed}`);
  let b = hash(`b${seed}`);
  let c = hash(`c${seed}`);
  let d = hash(`d${seed}`) | 1;
  const next = () => {
    a >>>= 0;
    b >>>= 0;
    c >>>= 0;
    d >>>= 0;
    const t = (((a + b) | 0) + d) | 0;
    d = (d + 1) | 0;
    a = b ^ (b >>> 9);
    b = (c + (c << 3)) | 0;
    c = (c << 21) | (c >>> 11);
    c = (c + t) | 0;
    return (t >>> 0) / 4294967296;
  };
  for (let i = 0; i < 12; i++) next();
  const random: Random = {
    next,
    int: (min, max) => min + Math.floor(next() * (max - min + 1)),
    chance: (p) => next() < p,
    pick: (items) => {
      if (items.length === 0) throw new Error('pick from nothing');
      return items[Math.floor(next() * items.length)] as (typeof items)[number];
    },
    fork: (name) => seeded(`${seed}/${name}`),
  };
  return random;
}
