// Liveness: a launched NodeClaim whose Node has not registered within the registration timeout is
// deleted, so the capacity is retried instead of paid for. The reason is written on the NodeClaim and as
// a Warning event *before* the delete, so `kubectl describe` and the event stream say why it went; the
// termination finalizer then removes the VM (the termination orchestration is started right away rather
// than waiting for the bridge's delete event, which the sweep would otherwise have to catch).
import { livenessDecision } from '../../decisions/liveness.js';
import { applyLifecycleConditions } from '../../decisions/lifecycle-conditions.js';
import type { NodeClaim } from '../../models/index.js';
import { ConditionTypes } from '../../models/karpenter.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { isManagedNodeClaim } from '../../decisions/ownership.js';
import { nodeClaimAfter, nodeClaimTarget, writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';
import { deleteNodeClaim } from '../termination/termination.js';
import { nodeClaimLifecycleLabels } from '../../decisions/cluster-gauges.js';

export type LivenessOutcome =
  { outcome: 'alive'; nextCheckAt?: Date } | { outcome: 'deleted'; message: string } | { outcome: 'gone' };

export function registrationTimeoutMs(deps: Pick<LifecycleDependencies, 'settings'>): number {
  return deps.settings.lifecycle.registrationTimeoutMinutes * 60_000;
}

export async function reconcileLiveness(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<LivenessOutcome> {
  if (!isManagedNodeClaim(nodeClaim)) return { outcome: 'alive' };
  const decision = livenessDecision(nodeClaim, deps.now(), {
    registrationTimeoutMs: registrationTimeoutMs(deps),
  });
  if (decision.action === 'none') {
    return { outcome: 'alive', ...(decision.nextCheckAt ? { nextCheckAt: decision.nextCheckAt } : {}) };
  }

  const options = { registrationTimeoutMs: registrationTimeoutMs(deps) };
  // Decided again on every read the write loop makes: a Node that registered in the meantime wins.
  const stored = nodeClaimAfter(
    await writeNodeClaim(deps.objects, nodeClaim, (current) => {
      const latest = livenessDecision(current, deps.now(), options);
      if (latest.action !== 'delete') return {};
      return {
        status: {
          ...current.status,
          conditions: applyLifecycleConditions(
            current.status?.conditions,
            [
              {
                type: ConditionTypes.registered,
                status: 'False',
                reason: latest.reason,
                message: latest.message,
              },
            ],
            deps.now(),
          ),
        },
      };
    }),
  );
  if (!stored) return { outcome: 'gone' };
  if (livenessDecision(stored, deps.now(), options).action !== 'delete') return { outcome: 'alive' };

  await deps.events.warning(nodeClaimTarget(stored), decision.reason, decision.message);
  if (!(await deleteNodeClaim(deps, stored, context))) return { outcome: 'gone' };
  const { nodepool, capacity_type } = nodeClaimLifecycleLabels(stored);
  deps.metrics.increment('karpenter_nodeclaims_disrupted_total', {
    reason: 'registration_timeout',
    nodepool,
    capacity_type,
    // Liveness is no consolidation and deletes at once, without a budget.
    consolidation_policy: '',
    termination_mode: 'forceful',
  });
  deps.log.warn('NodeClaim deleted: registration timeout', {
    nodeClaim: stored.metadata.name,
    nodeClaimUid: stored.metadata.uid,
    detail: decision.message,
  });
  return { outcome: 'deleted', message: decision.message };
}
