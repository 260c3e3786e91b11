// A launch is in flight while its VM is being created: the NodeClaim has a providerID (the PUT was
// accepted) and its Launched condition has no outcome yet. The launch monitors pace their polling by how
// many there are (launch-poll-pacing.ts), and each of them needs a live monitor (ensureLaunchMonitor).
import type { NodeClaim } from '../models/index.js';
import { ConditionTypes } from '../models/karpenter.js';
import { findCondition } from './conditions.js';

/** Whether the Launched condition states an outcome (True or False), not Unknown or nothing yet. */
export function hasLaunchOutcome(nodeClaim: NodeClaim): boolean {
  const launched = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
  return launched?.status === 'True' || launched?.status === 'False';
}

export function isLaunchInFlight(nodeClaim: NodeClaim): boolean {
  return Boolean(nodeClaim.status?.providerID) && !hasLaunchOutcome(nodeClaim);
}
