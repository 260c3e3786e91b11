// The Durable backend's sizing math (shared/decisions/durable-backend-sizing.ts): action rates from the
// NodeClaim workload at each burst and in steady state, the SKU each rate needs at the documented limits,
// and the measured counts it is fed, each labelled with its source and how to measure it again.
import { describe, expect, it } from 'vitest';
import {
  actionsPerNodeClaimFor,
  AZURE_STORAGE_LIMITS,
  backendFit,
  DURABLE_PRICES,
  DURABLE_TASK_SCHEDULER_LIMITS,
  durableBackendSizing,
  launchesPerMinuteAt,
  MEASURED_ACTIONS_PER_NODECLAIM,
  SECONDS_PER_MONTH,
} from '../../shared/decisions/durable-backend-sizing.js';
import { SECONDS_PER_MONTH as FLEX_SECONDS_PER_MONTH } from '../../shared/decisions/flex-cost.js';
import { durableBackendTable, durableScenarios } from '../bench/durable-backend-table.js';

const weekly = { meanNodeClaimLifetimeHours: 168 };
const oneBurst = (launches: number, withinMinutes: number, actionsPerNodeClaim: number) =>
  durableBackendSizing({
    nodes: 5000,
    actionsPerNodeClaim,
    bursts: [{ launches, withinMinutes }],
    ...weekly,
  }).bursts[0]!;

describe('durableBackendSizing', () => {
  it('counts a burst as launches a second times the actions of each, for every burst in its order', () => {
    const sizing = durableBackendSizing({
      nodes: 1000,
      actionsPerNodeClaim: 31,
      bursts: [
        { launches: 1000, withinMinutes: 1 },
        { launches: 1000, withinMinutes: 10 },
      ],
      ...weekly,
    });
    expect(sizing.bursts.map((b) => b.withinMinutes)).toEqual([1, 10]);
    expect(sizing.bursts.map((b) => b.launchesPerMinute)).toEqual([1000, 100]);
    expect(sizing.bursts[0]!.actionsPerSecond).toBeCloseTo((1000 / 60) * 31, 10);
    expect(sizing.bursts[1]!.actionsPerSecond).toBeCloseTo((100 / 60) * 31, 10);
  });

  it('counts steady state as the fleet replaced once a lifetime, whatever the bursts', () => {
    const at = (bursts: { launches: number; withinMinutes: number }[]) =>
      durableBackendSizing({ nodes: 1000, actionsPerNodeClaim: 31, bursts, ...weekly });
    const sizing = at([{ launches: 1000, withinMinutes: 1 }]);
    expect(sizing.steadyActionsPerSecond).toBeCloseTo((1000 / (168 * 3600)) * 31, 12);
    expect(sizing.steadyActionsPerMonth).toBeCloseTo(sizing.steadyActionsPerSecond * 2_628_000, 6);
    expect(at([]).steadyActionsPerSecond).toBe(sizing.steadyActionsPerSecond);
    expect(at([]).bursts).toEqual([]);
    // The scheduler's month is the Flex cost model's: 730 h.
    expect(SECONDS_PER_MONTH).toBe(FLEX_SECONDS_PER_MONTH);
  });

  it('scales linearly in the actions per NodeClaim', () => {
    const at = (actionsPerNodeClaim: number) =>
      durableBackendSizing({
        nodes: 5000,
        actionsPerNodeClaim,
        bursts: [{ launches: 5000, withinMinutes: 1 }],
        ...weekly,
      });
    expect(at(62).bursts[0]!.actionsPerSecond).toBeCloseTo(2 * at(31).bursts[0]!.actionsPerSecond, 10);
    expect(at(62).steadyActionsPerSecond).toBeCloseTo(2 * at(31).steadyActionsPerSecond, 12);
  });

  it('fits Consumption up to its 500 actions a second and not beyond', () => {
    // 750 launches a minute of 40 actions each is 500 actions a second exactly.
    const edge = oneBurst(750, 1, 40);
    expect(edge.actionsPerSecond).toBeCloseTo(500, 10);
    expect(edge.fit.consumptionFits).toBe(true);
    const over = oneBurst(751, 1, 40);
    expect(over.fit.consumptionFits).toBe(false);
    expect(over.fit.dedicatedCapacityUnits).toBe(1);
    // The same launches spread over ten times as long fit again.
    expect(oneBurst(751, 10, 40).fit.consumptionFits).toBe(true);
  });

  it('asks for a capacity unit per 2,000 actions a second, at least one, and says when three are not enough', () => {
    const units = (launchesPerMinute: number) => oneBurst(launchesPerMinute, 1, 40).fit;
    expect(units(1)).toEqual({ consumptionFits: true, dedicatedCapacityUnits: 1, dedicatedFits: true });
    expect(units(3000).dedicatedCapacityUnits).toBe(1); // 2,000 actions/s
    expect(units(3001).dedicatedCapacityUnits).toBe(2);
    expect(units(9000)).toEqual({ consumptionFits: false, dedicatedCapacityUnits: 3, dedicatedFits: true });
    expect(units(9001)).toEqual({ consumptionFits: false, dedicatedCapacityUnits: 4, dedicatedFits: false });
    expect(backendFit(2000)).toEqual(units(3000));
  });

  it('refuses a workload that is not positive', () => {
    const good = { nodes: 100, actionsPerNodeClaim: 31, ...weekly };
    const burst = { launches: 100, withinMinutes: 1 };
    expect(() => durableBackendSizing({ ...good, bursts: [burst] })).not.toThrow();
    for (const key of Object.keys(good) as (keyof typeof good)[]) {
      expect(() => durableBackendSizing({ ...good, bursts: [burst], [key]: 0 })).toThrow(RangeError);
      expect(() => durableBackendSizing({ ...good, bursts: [burst], [key]: Number.NaN })).toThrow(RangeError);
    }
    for (const key of Object.keys(burst) as (keyof typeof burst)[]) {
      expect(() => durableBackendSizing({ ...good, bursts: [{ ...burst, [key]: 0 }] })).toThrow(RangeError);
      expect(() => durableBackendSizing({ ...good, bursts: [{ ...burst, [key]: -1 }] })).toThrow(RangeError);
    }
  });
});

describe('the inverses', () => {
  it('give the launches a minute a rate carries, and the actions per NodeClaim a rate allows', () => {
    expect(launchesPerMinuteAt(500, 40)).toBe(750);
    expect(oneBurst(launchesPerMinuteAt(500, 31), 1, 31).actionsPerSecond).toBeCloseTo(500, 10);
    // The goal: 250 actions/s for 1,000 launched within a minute is 15 actions per NodeClaim.
    expect(actionsPerNodeClaimFor(250, { launches: 1000, withinMinutes: 1 })).toBe(15);
    expect(actionsPerNodeClaimFor(250, { launches: 1000, withinMinutes: 10 })).toBe(150);
    expect(() => launchesPerMinuteAt(0, 31)).toThrow(RangeError);
    expect(() => actionsPerNodeClaimFor(250, { launches: 0, withinMinutes: 1 })).toThrow(RangeError);
  });
});

describe('the measured counts', () => {
  it("are the bench's: 6 at 30 s VM creation, 10 at 90 s, each the sum of its orchestrations", () => {
    const { fastCreation, slowCreation } = MEASURED_ACTIONS_PER_NODECLAIM;
    expect([fastCreation.value, fastCreation.vmCreationSeconds]).toEqual([6, 30]);
    expect([slowCreation.value, slowCreation.vmCreationSeconds]).toEqual([10, 90]);
    for (const measured of [fastCreation, slowCreation]) {
      const sum = Object.values(measured.byOrchestration).reduce((a: number, b: number) => a + b, 0);
      expect(sum).toBe(measured.value);
    }
  });

  it('name where they come from and the command line that measures them again', () => {
    const { fastCreation, slowCreation } = MEASURED_ACTIONS_PER_NODECLAIM;
    for (const measured of [fastCreation, slowCreation]) {
      expect(measured.source).toContain('test/bench/durable-work-bench.ts');
      expect(measured.remeasure).toMatch(/npx tsx test\/bench\/durable-work-bench\.ts$/);
    }
    expect(fastCreation.remeasure).not.toContain('DURABLE_BENCH_CREATE_SECONDS');
    expect(slowCreation.remeasure).toContain(
      `DURABLE_BENCH_CREATE_SECONDS=${slowCreation.vmCreationSeconds} `,
    );
  });
});

describe('the table docs/cost.md carries', () => {
  it('sizes each fleet launched within one minute and within ten, from the measured counts', () => {
    const [small, thousand, large] = durableScenarios(31);
    expect([small, thousand, large].map((s) => s!.workload.nodes)).toEqual([100, 1000, 5000]);
    expect(thousand!.bursts.map((b) => [b.withinMinutes, b.launches])).toEqual([
      [1, 1000],
      [10, 1000],
    ]);
    expect(thousand!.bursts[0]!.fit.consumptionFits).toBe(false);
    expect(thousand!.bursts[1]!.fit.consumptionFits).toBe(true);
    expect(large!.bursts[0]!.fit.dedicatedCapacityUnits).toBe(2);
    expect(small!.bursts[0]!.fit.consumptionFits).toBe(true);
  });

  it('prints a row per measured count and fleet, each input with its re-measure command, and the goals met', () => {
    const table = durableBackendTable();
    expect(table).toContain(
      '| 6 | 1,000 | 100 | Consumption yes; Dedicated 1 CU | 10 | Consumption yes; Dedicated 1 CU |',
    );
    expect(table).toContain(
      '| 10 | 5,000 | 833 | Consumption no; Dedicated 1 CU | 83 | Consumption yes; Dedicated 1 CU |',
    );
    expect(table.split('\n').filter((line) => /^\| (6|10) \|/.test(line))).toHaveLength(6);
    expect(table).toContain('re-measure: npx tsx test/bench/durable-work-bench.ts');
    expect(table).toContain(
      're-measure: DURABLE_BENCH_CREATE_SECONDS=90 npx tsx test/bench/durable-work-bench.ts',
    );
    expect(table).toContain('A = 6, 100 actions/s, met; A = 10, 167 actions/s, met');
    expect(table).not.toMatch(/estimate/i);
  });
});

describe('the figures it uses', () => {
  it('are the documented limits, each with its page', () => {
    expect(DURABLE_TASK_SCHEDULER_LIMITS.consumptionMaxActionsPerSecond.value).toBe(500);
    expect(DURABLE_TASK_SCHEDULER_LIMITS.dedicatedActionsPerSecondPerCapacityUnit.value).toBe(2000);
    expect(DURABLE_TASK_SCHEDULER_LIMITS.dedicatedMaxCapacityUnits.value).toBe(3);
    expect(AZURE_STORAGE_LIMITS.maxPartitions.value).toBe(16);
    for (const figure of [
      ...Object.values(DURABLE_TASK_SCHEDULER_LIMITS),
      ...Object.values(AZURE_STORAGE_LIMITS),
    ])
      expect(figure.source).toMatch(/^https:\/\/learn\.microsoft\.com\//);
  });

  it('invent no price: the documentation gives none', () => {
    expect(DURABLE_PRICES.consumptionPerAction).toBeNull();
    expect(DURABLE_PRICES.dedicatedPerCapacityUnitMonth).toBeNull();
  });
});
