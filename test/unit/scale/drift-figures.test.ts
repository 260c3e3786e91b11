// The scale scenario's drift figures, on made-up cycles: the ideal makespan (waves of each pool's budget,
// pools side by side) and how busy the drift kept the budgets, which together say whether a makespan
// ratio over 1 is idle budget or cycles that vary.
import { describe, expect, test } from 'vitest';
import { driftBudgetBusy, idealDriftMakespanMs, mean } from '../../../local/scenarios/scale/scale-figures.js';

const pools = new Map([
  ['a', 100],
  ['b', 45],
]);

describe('drift figures', () => {
  test('budgets never idle: every slot disrupting for the whole makespan', () => {
    // 10% of 100 is 10 slots, of 45 rounds up to 5: 15 slots, each busy for the 100 s makespan.
    const cycles = Array.from({ length: 150 }, () => 10_000);
    expect(driftBudgetBusy(pools, 10, cycles, 100_000)).toBeCloseTo(1);
    expect(idealDriftMakespanMs(pools, 10, 10_000)).toEqual({ ms: 100_000, waves: 10 });
  });

  test('a slot refilled late shows as idle budget, the same cycles over a longer makespan', () => {
    const cycles = Array.from({ length: 150 }, () => 10_000);
    // Each refill 2.5 s late: the makespan stretches by a quarter and the budget is busy 80% of it.
    expect(driftBudgetBusy(pools, 10, cycles, 125_000)).toBeCloseTo(0.8);
  });

  test('no budget or no makespan gives no figure', () => {
    expect(driftBudgetBusy(new Map([['a', 0]]), 10, [1_000], 10_000)).toBeNaN();
    expect(driftBudgetBusy(pools, 10, [1_000], 0)).toBeNaN();
    expect(mean([])).toBeNaN();
    expect(mean([1, 2, 6])).toBe(3);
  });
});
