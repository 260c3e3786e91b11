// A launch is in flight while its VM is being created: the NodeClaim has a providerID (the PUT was
// accepted) and its Launched condition has no outcome yet. The launch monitors pace their polling by how
// many there are (launch-poll-pacing.ts).
import type { NodeClaim } from '../models/index.js';
import { ConditionTypes } from '../models/karpenter.js';
import { findCondition } from './conditions.js';

export function isLaunchInFlight(nodeClaim: NodeClaim): boolean {
  if (!nodeClaim.status?.providerID) return false;
  const launched = findCondition(nodeClaim.status.conditions, ConditionTypes.launched);
  return launched === undefined || launched.status === 'Unknown';
}
