// Node repair's policies for the compressed day: the Azure provider's (decisions/node-repair/policies.ts)
// with every toleration read as simulated time, as the day reads consolidateAfter and expireAfter, so a
// node NotReady for 10 simulated minutes is repaired within the day. Pure.
import { AZURE_REPAIR_POLICIES, formatRepairPolicy } from '../../../shared/decisions/node-repair/policies.js';
import { dayClock } from './day-clock.js';

/** REPAIR_POLICIES for a day of `dayMinutes` wall minutes (whole milliseconds, at least 1 s when not 0). */
export function dayRepairPolicies(dayMinutes: number): string {
  const { msPerHour } = dayClock(0, dayMinutes);
  return AZURE_REPAIR_POLICIES.map((policy) =>
    formatRepairPolicy({
      ...policy,
      tolerationMs:
        policy.tolerationMs === 0
          ? 0
          : Math.max(1_000, Math.round((policy.tolerationMs * msPerHour) / 3_600_000)),
    }),
  ).join(',');
}
