// Node repair's policies for the compressed day: the Azure provider's (decisions/node-repair/policies.ts)
// with every toleration read as simulated time, as the day reads consolidateAfter and expireAfter, so a
// node NotReady for 10 simulated minutes is repaired within the day. A toleration is never shorter than a
// few kubelet heartbeats of wall time, though: kube-controller-manager marks every Node Ready=Unknown
// after an API server outage (its grace period is wall time), and each kubelet posts Ready again at its
// next heartbeat. The deployed 10 minutes outlast that; 1.5 s of compressed toleration did not, and the
// day repaired healthy nodes whose only fault was the outage. Pure.
import { AZURE_REPAIR_POLICIES, formatRepairPolicy } from '../../../shared/decisions/node-repair/policies.js';
import { KUBELET_HEARTBEAT_MS } from '../../kubelet-simulator/heartbeat-loop.js';
import { dayClock } from './day-clock.js';

/** The shortest non-zero toleration: three heartbeats, so one missed renewal after an outage is not a fault. */
export const SHORTEST_TOLERATION_MS = 3 * KUBELET_HEARTBEAT_MS;

/** REPAIR_POLICIES for a day of `dayMinutes` wall minutes (whole milliseconds, SHORTEST_TOLERATION_MS when not 0). */
export function dayRepairPolicies(dayMinutes: number): string {
  const { msPerHour } = dayClock(0, dayMinutes);
  return AZURE_REPAIR_POLICIES.map((policy) =>
    formatRepairPolicy({
      ...policy,
      tolerationMs:
        policy.tolerationMs === 0
          ? 0
          : Math.max(SHORTEST_TOLERATION_MS, Math.round((policy.tolerationMs * msPerHour) / 3_600_000)),
    }),
  ).join(',');
}
