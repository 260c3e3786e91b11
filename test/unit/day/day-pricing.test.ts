// The day's lower bound of the requests: the pods' vCPUs and memory at the best price per unit, but never
// fewer nodes than the pods need (one for any pod, one per zone a DoNotSchedule zone spread reaches), so
// the cost ratio on a quiet night measures waste, not how loose the bound is.
import { describe, expect, it } from 'vitest';
import { dayPlan, DAY_ZONES } from '../../../local/scenarios/day/plan.js';
import { minimumNodes, poolSizes, requestsLowerBound } from '../../../local/scenarios/day/pricing.js';

const plan = dayPlan({ seed: 26, outageSeconds: 60 });
const pool = (name: string) => {
  const found = plan.pools.find((p) => p.name === name);
  if (!found) throw new Error(`no pool ${name}`);
  return found;
};

describe('minimumNodes', () => {
  it('is 0 without pods, 1 for any pod, and min(pods, zones) for a zone spread', () => {
    expect(minimumNodes([], 3)).toBe(0);
    expect(minimumNodes([{ pods: 0, zoneSpread: true }], 3)).toBe(0);
    expect(minimumNodes([{ pods: 5, zoneSpread: false }], 3)).toBe(1);
    expect(minimumNodes([{ pods: 2, zoneSpread: true }], 3)).toBe(2);
    expect(
      minimumNodes(
        [
          { pods: 32, zoneSpread: true },
          { pods: 2, zoneSpread: false },
        ],
        3,
      ),
    ).toBe(3);
  });
});

describe('requestsLowerBound', () => {
  it('prices a few small pods spread over three zones at three of the cheapest nodes at least', () => {
    const general = pool('general');
    const cheapest = Math.min(...poolSizes(general).map((s) => s.price));
    const demand = { cpu: 1, memoryGiB: 2, nodes: 0 };
    const byResource = requestsLowerBound([general], new Map([['general', demand]]));
    const spread = requestsLowerBound(
      [general],
      new Map([['general', { ...demand, nodes: DAY_ZONES.length }]]),
    );
    expect(byResource).toBeLessThan(cheapest);
    expect(spread).toBeGreaterThanOrEqual(3 * cheapest - 1e-9);
  });

  it('adds the pools, and a pool without requests costs nothing', () => {
    const pools = [pool('general'), pool('arm')];
    const general = { cpu: 4, memoryGiB: 8, nodes: 3 };
    const arm = { cpu: 1, memoryGiB: 2, nodes: 1 };
    const both = requestsLowerBound(
      pools,
      new Map([
        ['general', general],
        ['arm', arm],
      ]),
    );
    const alone = requestsLowerBound(pools, new Map([['general', general]]));
    const armAlone = requestsLowerBound(pools, new Map([['arm', arm]]));
    expect(both).toBeCloseTo(alone + armAlone, 9);
    expect(requestsLowerBound(pools, new Map([['arm', { cpu: 0, memoryGiB: 0, nodes: 0 }]]))).toBe(0);
  });
});
