// Initialization: once a registered NodeClaim's Node is Ready, free of startup and ephemeral taints and
// advertises the requested extended resources, label the Node karpenter.sh/initialized=true and set
// Initialized=True; until then keep Initialized=Unknown with the reason, so `kubectl get nodeclaims`
// says what the node is waiting for. The label goes first: it is what tooling selects on, and a crash
// between the writes is repaired by the next pass (the label patch is then empty).
import { findCondition, isConditionTrue } from '../../decisions/conditions.js';
import { evaluateInitialization, initializedLabelPatch } from '../../decisions/initialization.js';
import { applyLifecycleConditions } from '../../decisions/lifecycle-conditions.js';
import { matchNodeForClaim } from '../../decisions/registration.js';
import { retryOnConflict } from '../../kube/retry-on-conflict.js';
import type { NodeClaim } from '../../models/index.js';
import { ConditionTypes } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import { recordNodeClaimTransition } from '../../observability/nodeclaim-status-metrics.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { isManagedNodeClaim } from '../../decisions/ownership.js';
import { nodeClaimAfter, wasWritten, writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';

export type InitializationOutcome =
  | { outcome: 'skipped'; why: string }
  | { outcome: 'waiting'; nodeClaim: NodeClaim; reason: string; message: string }
  | { outcome: 'initialized'; nodeClaim: NodeClaim; statusWritten: boolean }
  | { outcome: 'nodeclaim-gone' };

/** Registered, managed, alive, and not yet Initialized=True. */
export function needsInitialization(nodeClaim: NodeClaim): boolean {
  const conditions = nodeClaim.status?.conditions;
  return (
    isManagedNodeClaim(nodeClaim) &&
    !nodeClaim.metadata.deletionTimestamp &&
    isConditionTrue(conditions, ConditionTypes.registered) &&
    !isConditionTrue(conditions, ConditionTypes.initialized)
  );
}

export async function reconcileInitialization(
  deps: LifecycleDependencies,
  nodeClaim: NodeClaim,
  nodes: readonly Node[],
): Promise<InitializationOutcome> {
  if (!needsInitialization(nodeClaim)) return { outcome: 'skipped', why: 'not awaiting initialization' };
  const match = matchNodeForClaim(nodeClaim, nodes);
  const node = match.outcome === 'found' ? match.node : undefined;
  const verdict = evaluateInitialization(nodeClaim, node);

  if (verdict.status !== 'True' || node === undefined) {
    // The verdict comes from a read that may be behind (the sweep's view, a queued event's): a NodeClaim
    // another writer initialized since is left as it is. Written over, its Initialized=True went back to
    // Unknown, the budgets stopped counting the node, and a drift replacement that lost it was deleted
    // as never initialized.
    const stored = nodeClaimAfter(
      await writeNodeClaim(deps.objects, nodeClaim, (current) =>
        needsInitialization(current)
          ? {
              status: {
                ...current.status,
                conditions: applyLifecycleConditions(current.status?.conditions, [verdict], deps.now()),
              },
            }
          : {},
      ),
    );
    if (!stored) return { outcome: 'nodeclaim-gone' };
    if (!needsInitialization(stored)) return { outcome: 'skipped', why: 'initialized or deleted meanwhile' };
    return { outcome: 'waiting', nodeClaim: stored, reason: verdict.reason, message: verdict.message };
  }

  await labelInitialized(deps, node);
  const write = await writeNodeClaim(deps.objects, nodeClaim, (current) => ({
    status: {
      ...current.status,
      conditions: applyLifecycleConditions(current.status?.conditions, [verdict], deps.now()),
    },
  }));
  if (write.outcome === 'gone') return { outcome: 'nodeclaim-gone' };
  const stored = write.nodeClaim;
  const statusWritten =
    wasWritten(write) && !isConditionTrue(write.before.status?.conditions, ConditionTypes.initialized);
  if (statusWritten) {
    recordNodeClaimTransition(deps.metrics, stored, {
      type: ConditionTypes.initialized,
      status: 'True',
      reason: findCondition(stored.status?.conditions, ConditionTypes.initialized)?.reason ?? '',
      previousStatus: 'Unknown',
      previousSince: undefined,
      at: deps.now(),
    });
    deps.log.info('NodeClaim initialized', { nodeClaim: stored.metadata.name, node: node.metadata.name });
  }
  return { outcome: 'initialized', nodeClaim: stored, statusWritten };
}

/** Adds karpenter.sh/initialized=true with a guarded patch; a conflict re-reads and retries. */
async function labelInitialized(deps: LifecycleDependencies, found: Node): Promise<void> {
  await retryOnConflict(
    found,
    async (node) => {
      const operations = initializedLabelPatch(node);
      if (operations.length > 0) await deps.nodes.patch(node.metadata.name, operations);
    },
    (stale) => deps.nodes.get(stale.metadata.name),
  );
}
