// Node repair's policies for the compressed day: the Azure provider's, with the tolerations read as
// simulated time but never shorter than three kubelet heartbeats of wall time, written so the app's own
// REPAIR_POLICIES parser reads them back.
import { describe, expect, it } from 'vitest';
import { dayRepairPolicies, SHORTEST_TOLERATION_MS } from '../../../local/scenarios/day/repair-policies.js';
import {
  AZURE_REPAIR_POLICIES,
  parseRepairPolicies,
} from '../../../shared/decisions/node-repair/policies.js';

function tolerations(dayMinutes: number): number[] {
  const parsed = parseRepairPolicies(dayRepairPolicies(dayMinutes));
  if (!('policies' in parsed)) throw new Error(parsed.problems.join('; '));
  expect(parsed.policies.map((p) => ({ ...p, tolerationMs: 0 }))).toEqual(
    AZURE_REPAIR_POLICIES.map((p) => ({ ...p, tolerationMs: 0 })),
  );
  return parsed.policies.map((p) => p.tolerationMs);
}

describe('the day’s repair policies', () => {
  it('make 10 minutes of NotReady 10 simulated minutes on a long day, keep the immediate ones immediate', () => {
    // 120 wall minutes for 24 h: an hour is 300 s, 10 minutes 50 s.
    expect(tolerations(120)).toEqual([50_000, 50_000, 0, 0]);
  });

  it('never go below three kubelet heartbeats, so a node the API server outage left Unknown is not repaired', () => {
    expect(SHORTEST_TOLERATION_MS).toBe(30_000);
    // 3.5 wall minutes (CI's day): 10 simulated minutes would be 1.458 s; 12 minutes: 5 s.
    expect(tolerations(3.5)).toEqual([30_000, 30_000, 0, 0]);
    expect(tolerations(12)).toEqual([30_000, 30_000, 0, 0]);
  });
});
