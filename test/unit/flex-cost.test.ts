// Flex Consumption's billing rules as the cost command applies them: the always-ready baseline for every
// second, the 1 s minimum per execution, busy always-ready time at its lower rate, the on-demand free
// grant; prices from Retail Prices items (executions priced per 10); Karpenter's share of its node.
import { describe, expect, it } from 'vitest';
import {
  flexMonthlyCost,
  flexPricesFrom,
  selfHostedMonthlyCost,
  SECONDS_PER_MONTH,
  type FlexPrices,
} from '../../shared/decisions/flex-cost.js';

const prices: FlexPrices = {
  onDemandPerGibSecond: 0.000026,
  onDemandPerExecution: 0.0000004,
  alwaysReadyBaselinePerGibSecond: 0.000004,
  alwaysReadyPerGibSecond: 0.000016,
  alwaysReadyPerExecution: 0.0000004,
};

describe('flexPricesFrom', () => {
  const item = (meterName: string, unitOfMeasure: string, retailPrice: number) => ({
    productName: 'Functions Flex Consumption',
    meterName,
    unitOfMeasure,
    retailPrice,
  });

  it('reads the five meters, executions per 10', () => {
    expect(
      flexPricesFrom([
        item('On Demand Execution Time', '1 GiB Second', 0.000026),
        item('On Demand Total Executions', '10', 0.000004),
        item('Always Ready Baseline', '1 GiB Second', 0.000004),
        item('Always Ready Execution Time', '1 GiB Second', 0.000016),
        item('Always Ready Total Executions', '10', 0.000004),
        { ...item('On Demand Execution Time', '1 GiB Second', 99), productName: 'Functions' },
      ]),
    ).toEqual({ ...prices, onDemandPerExecution: 0.000004 / 10, alwaysReadyPerExecution: 0.000004 / 10 });
  });

  it('names the meters it did not find', () => {
    expect(flexPricesFrom([item('Always Ready Baseline', '1 GiB Second', 0.000004)])).toEqual({
      missing: [
        'On Demand Execution Time',
        'On Demand Total Executions',
        'Always Ready Execution Time',
        'Always Ready Total Executions',
      ],
    });
  });
});

describe('flexMonthlyCost', () => {
  it('bills always-ready instances for every second of the month', () => {
    const cost = flexMonthlyCost({ instanceMemoryGib: 2, alwaysReadyInstances: 1, executions: [] }, prices);
    expect(cost.totalUsd).toBeCloseTo(2 * SECONDS_PER_MONTH * 0.000004, 6);
  });

  it('bills a short execution as 1 s, beyond the free grant', () => {
    const cost = flexMonthlyCost(
      {
        instanceMemoryGib: 2,
        alwaysReadyInstances: 0,
        executions: [{ name: 'timer', perMonth: 1_000_000, seconds: 0.01, alwaysReady: false }],
      },
      prices,
    );
    const gibSeconds = 1_000_000 * 1 * 2;
    expect(cost.totalUsd).toBeCloseTo(
      (gibSeconds - 100_000) * 0.000026 + (1_000_000 - 250_000) * 0.0000004,
      6,
    );
  });

  it('bills busy always-ready time at its own rate, with no free grant', () => {
    const cost = flexMonthlyCost(
      {
        instanceMemoryGib: 1,
        alwaysReadyInstances: 1,
        executions: [{ name: 'queue', perMonth: 1000, seconds: 3, alwaysReady: true }],
      },
      prices,
    );
    expect(cost.totalUsd).toBeCloseTo(SECONDS_PER_MONTH * 0.000004 + 3000 * 0.000016 + 1000 * 0.0000004, 6);
  });
});

describe('selfHostedMonthlyCost', () => {
  it('charges the controller the larger of its CPU and memory share of the node', () => {
    const cost = selfHostedMonthlyCost({
      replicas: 2,
      vcpuPerReplica: 1,
      gibPerReplica: 1,
      node: { name: 'D4', usdPerHour: 0.2, vcpus: 4, gib: 16 },
    });
    expect(cost.totalUsd).toBeCloseTo(0.5 * 0.2 * 730, 6);
  });
});
