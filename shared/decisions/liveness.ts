// Liveness: a NodeClaim whose VM was launched but whose Node never registered is deleted (its VM goes with
// it) so the capacity can be retried elsewhere instead of being paid for forever.
import { ConditionTypes } from '../models/karpenter.js';
import type { NodeClaim } from '../models/karpenter.js';
import { findCondition } from './conditions.js';

export const REGISTRATION_TIMEOUT_REASON = 'RegistrationTimeout';

export interface LivenessOptions {
  registrationTimeoutMs: number;
}

export type LivenessDecision =
  | { action: 'none'; nextCheckAt?: Date }
  | { action: 'delete'; reason: typeof REGISTRATION_TIMEOUT_REASON; message: string };

/**
 * The clock starts at the Launched condition's last transition when there is one, otherwise at the
 * NodeClaim's creation. Using the transition (not the first time Launched appeared) means a launch that
 * took long to complete still gives its Node the full timeout to join after the VM went from "creating"
 * to "running".
 */
function registrationClockStart(nodeClaim: NodeClaim): Date | undefined {
  const launched = findCondition(nodeClaim.status?.conditions, ConditionTypes.launched);
  const stamp = launched?.lastTransitionTime ?? nodeClaim.metadata.creationTimestamp;
  if (stamp === undefined) return undefined;
  const start = new Date(stamp);
  return Number.isNaN(start.getTime()) ? undefined : start;
}

function isLaunched(nodeClaim: NodeClaim): boolean {
  return (
    Boolean(nodeClaim.status?.providerID) ||
    findCondition(nodeClaim.status?.conditions, ConditionTypes.launched) !== undefined
  );
}

export function formatDuration(ms: number): string {
  const totalSeconds = Math.round(ms / 1000);
  const hours = Math.floor(totalSeconds / 3600);
  const minutes = Math.floor((totalSeconds % 3600) / 60);
  const seconds = totalSeconds % 60;
  const parts = [hours ? `${hours}h` : '', minutes ? `${minutes}m` : '', seconds ? `${seconds}s` : ''];
  return parts.join('') || '0s';
}

/**
 * Delete when a launched, not yet Registered NodeClaim has waited `registrationTimeoutMs` or more.
 * Otherwise `nextCheckAt` says when the answer could change (absent when it cannot by the clock alone),
 * so the sweep can schedule or skip the next look.
 */
export function livenessDecision(
  nodeClaim: NodeClaim,
  now: Date,
  options: LivenessOptions,
): LivenessDecision {
  if (nodeClaim.metadata.deletionTimestamp) return { action: 'none' };
  const registered = findCondition(nodeClaim.status?.conditions, ConditionTypes.registered);
  if (registered?.status === 'True') return { action: 'none' };
  if (!isLaunched(nodeClaim)) return { action: 'none' };
  const start = registrationClockStart(nodeClaim);
  if (start === undefined) return { action: 'none' };

  const deadline = start.getTime() + options.registrationTimeoutMs;
  if (now.getTime() < deadline) return { action: 'none', nextCheckAt: new Date(deadline) };
  return {
    action: 'delete',
    reason: REGISTRATION_TIMEOUT_REASON,
    message: `Node did not register within ${formatDuration(options.registrationTimeoutMs)} of launch (since ${start.toISOString()})`,
  };
}
