// The day's one source of chance: a small seeded generator (mulberry32), so one seed replays the same
// workload and the same weather. Pure: the state is the seed and the draws so far.

export interface Random {
  /** A number in [0, 1). */
  next(): number;
  /** A number in [low, high). */
  between(low: number, high: number): number;
  /** An integer in [low, high]. */
  integer(low: number, high: number): number;
  pick<T>(values: readonly T[]): T;
}

export function seededRandom(seed: number): Random {
  let state = seed >>> 0;
  const next = (): number => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
  const random: Random = {
    next,
    between: (low, high) => low + (high - low) * next(),
    integer: (low, high) => low + Math.floor((high - low + 1) * next()),
    pick: (values) => {
      if (values.length === 0) throw new Error('cannot pick from nothing');
      return values[Math.floor(values.length * next())] as (typeof values)[number];
    },
  };
  return random;
}

/** A seed for a run that was given none: printed, so the run can be replayed. */
export function freshSeed(): number {
  return Math.floor(Math.random() * 1_000_000);
}
