// The Node conditions the simulated node agents post besides kubelet's Ready: a fault raised by a test
// or scenario (AKS's node problem detection setting kubernetes.azure.com/NodeHealthy=False), what the
// agent posts once a reboot cleared it, and the spot eviction notice the AKS node agent turns into
// PreemptionScheduled=True from IMDS Scheduled Events (a Preempt event with its NotBefore).
import type { ConditionStatus } from '../../shared/models/kube.js';

export interface SimulatedCondition {
  type: string;
  status: ConditionStatus;
  reason?: string;
  message?: string;
}

interface StatusPatch {
  status: { conditions: Array<Record<string, string>> };
}

/**
 * Strategic merge patch of the status subresource setting one condition; `transition` says whether its
 * status changed (a new lastTransitionTime) or is re-posted unchanged.
 */
export function conditionPatch(condition: SimulatedCondition, now: Date, transition: boolean): StatusPatch {
  const time = now.toISOString();
  return {
    status: {
      conditions: [
        {
          type: condition.type,
          status: condition.status,
          ...(condition.reason ? { reason: condition.reason } : {}),
          ...(condition.message ? { message: condition.message } : {}),
          lastHeartbeatTime: time,
          ...(transition ? { lastTransitionTime: time } : {}),
        },
      ],
    },
  };
}

/** What a node agent posts once the fault is gone (the status opposite to the fault's), and why. */
export function clearedCondition(fault: SimulatedCondition, why: string): SimulatedCondition {
  const healthy: ConditionStatus = fault.status === 'True' ? 'False' : 'True';
  return { type: fault.type, status: healthy, reason: 'Recovered', message: why };
}

export const PREEMPTION_CONDITION_TYPE = 'PreemptionScheduled';

/** The AKS node agent's condition for a Scheduled Events Preempt event. */
export function preemptionCondition(notBefore: string): SimulatedCondition {
  return {
    type: PREEMPTION_CONDITION_TYPE,
    status: 'True',
    reason: 'Preempt',
    message: `Scheduled event Preempt for this spot VM, NotBefore ${notBefore}`,
  };
}
