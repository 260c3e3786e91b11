// The Durable backend's sizing math (shared/decisions/durable-backend-sizing.ts): action rates from the
// NodeClaim workload, and the SKU each rate fits, at the documented limits.
import { describe, expect, it } from 'vitest';
import {
  AZURE_STORAGE_LIMITS,
  DURABLE_PRICES,
  DURABLE_TASK_SCHEDULER_LIMITS,
  durableBackendSizing,
  ESTIMATED_ACTIONS_PER_NODECLAIM,
  SECONDS_PER_MONTH,
} from '../../shared/decisions/durable-backend-sizing.js';
import { SECONDS_PER_MONTH as FLEX_SECONDS_PER_MONTH } from '../../shared/decisions/flex-cost.js';

const weekly = { meanNodeClaimLifetimeHours: 168 };

describe('durableBackendSizing', () => {
  it('counts a burst as launches a second times the actions of each', () => {
    const sizing = durableBackendSizing({
      nodes: 1000,
      actionsPerNodeClaim: 40,
      burstLaunchesPerMinute: 100,
      ...weekly,
    });
    expect(sizing.burstActionsPerSecond).toBeCloseTo((100 / 60) * 40, 10);
  });

  it('counts steady state as the fleet replaced once a lifetime', () => {
    const sizing = durableBackendSizing({
      nodes: 1000,
      actionsPerNodeClaim: 40,
      burstLaunchesPerMinute: 100,
      ...weekly,
    });
    expect(sizing.steadyActionsPerSecond).toBeCloseTo((1000 / (168 * 3600)) * 40, 12);
    expect(sizing.steadyActionsPerMonth).toBeCloseTo(sizing.steadyActionsPerSecond * 2_628_000, 6);
    // The scheduler's month is the Flex cost model's: 730 h.
    expect(SECONDS_PER_MONTH).toBe(FLEX_SECONDS_PER_MONTH);
  });

  it('scales linearly in the actions per NodeClaim, so the measured count replaces the estimate by a factor', () => {
    const at = (actionsPerNodeClaim: number) =>
      durableBackendSizing({ nodes: 5000, actionsPerNodeClaim, burstLaunchesPerMinute: 500, ...weekly });
    expect(at(80).burstActionsPerSecond).toBeCloseTo(2 * at(40).burstActionsPerSecond, 10);
    expect(at(80).steadyActionsPerSecond).toBeCloseTo(2 * at(40).steadyActionsPerSecond, 12);
  });

  it('fits Consumption up to its 500 actions a second and not beyond', () => {
    // 750 launches a minute of 40 actions each is 500 actions a second exactly.
    const edge = durableBackendSizing({
      nodes: 5000,
      actionsPerNodeClaim: 40,
      burstLaunchesPerMinute: 750,
      ...weekly,
    });
    expect(edge.burstActionsPerSecond).toBeCloseTo(500, 10);
    expect(edge.burst.consumptionFits).toBe(true);
    const over = durableBackendSizing({
      nodes: 5000,
      actionsPerNodeClaim: 40,
      burstLaunchesPerMinute: 751,
      ...weekly,
    });
    expect(over.burst.consumptionFits).toBe(false);
    expect(over.burst.dedicatedCapacityUnits).toBe(1);
  });

  it('asks for a capacity unit per 2,000 actions a second, at least one, and says when three are not enough', () => {
    const units = (burstLaunchesPerMinute: number) =>
      durableBackendSizing({ nodes: 5000, actionsPerNodeClaim: 40, burstLaunchesPerMinute, ...weekly }).burst;
    expect(units(1)).toEqual({ consumptionFits: true, dedicatedCapacityUnits: 1, dedicatedFits: true });
    expect(units(3000).dedicatedCapacityUnits).toBe(1); // 2,000 actions/s
    expect(units(3001).dedicatedCapacityUnits).toBe(2);
    expect(units(9000)).toEqual({ consumptionFits: false, dedicatedCapacityUnits: 3, dedicatedFits: true });
    expect(units(9001)).toEqual({ consumptionFits: false, dedicatedCapacityUnits: 4, dedicatedFits: false });
  });

  it('refuses a workload that is not positive', () => {
    const good = { nodes: 100, actionsPerNodeClaim: 40, burstLaunchesPerMinute: 10, ...weekly };
    for (const key of Object.keys(good) as (keyof typeof good)[]) {
      expect(() => durableBackendSizing({ ...good, [key]: 0 })).toThrow(RangeError);
      expect(() => durableBackendSizing({ ...good, [key]: Number.NaN })).toThrow(RangeError);
    }
  });
});

describe('the figures it uses', () => {
  it('are the documented limits, each with its page, and the estimate is labelled as one', () => {
    expect(DURABLE_TASK_SCHEDULER_LIMITS.consumptionMaxActionsPerSecond.value).toBe(500);
    expect(DURABLE_TASK_SCHEDULER_LIMITS.dedicatedActionsPerSecondPerCapacityUnit.value).toBe(2000);
    expect(DURABLE_TASK_SCHEDULER_LIMITS.dedicatedMaxCapacityUnits.value).toBe(3);
    expect(AZURE_STORAGE_LIMITS.maxPartitions.value).toBe(16);
    for (const figure of [
      ...Object.values(DURABLE_TASK_SCHEDULER_LIMITS),
      ...Object.values(AZURE_STORAGE_LIMITS),
    ])
      expect(figure.source).toMatch(/^https:\/\/learn\.microsoft\.com\//);
    expect(ESTIMATED_ACTIONS_PER_NODECLAIM).toBe(40);
  });

  it('invent no price: the documentation gives none', () => {
    expect(DURABLE_PRICES.consumptionPerAction).toBeNull();
    expect(DURABLE_PRICES.dedicatedPerCapacityUnitMonth).toBeNull();
  });
});
