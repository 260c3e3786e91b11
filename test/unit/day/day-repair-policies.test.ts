// Node repair's policies for the compressed day: the Azure provider's, with the tolerations read as
// simulated time, written so the app's own REPAIR_POLICIES parser reads them back.
import { describe, expect, it } from 'vitest';
import { dayRepairPolicies } from '../../../local/scenarios/day/repair-policies.js';
import {
  AZURE_REPAIR_POLICIES,
  parseRepairPolicies,
} from '../../../shared/decisions/node-repair/policies.js';

describe('the day’s repair policies', () => {
  it('make 10 minutes of NotReady 10 simulated minutes, keep the immediate ones immediate', () => {
    // 3.5 wall minutes for 24 h: an hour is 8.75 s, 10 minutes 1.458 s.
    const parsed = parseRepairPolicies(dayRepairPolicies(3.5));
    if (!('policies' in parsed)) throw new Error(parsed.problems.join('; '));
    expect(parsed.policies).toEqual(
      AZURE_REPAIR_POLICIES.map((p) => ({ ...p, tolerationMs: p.tolerationMs === 0 ? 0 : 1_458 })),
    );
    const atTwelve = parseRepairPolicies(dayRepairPolicies(12));
    if (!('policies' in atTwelve)) throw new Error(atTwelve.problems.join('; '));
    expect(atTwelve.policies.map((p) => p.tolerationMs)).toEqual([5_000, 5_000, 0, 0]);
  });

  it('never goes below a second, so a node is not repaired for a blip', () => {
    const parsed = parseRepairPolicies(dayRepairPolicies(0.5));
    if (!('policies' in parsed)) throw new Error(parsed.problems.join('; '));
    expect(Math.min(...parsed.policies.map((p) => p.tolerationMs).filter((ms) => ms > 0))).toBe(1_000);
  });
});
