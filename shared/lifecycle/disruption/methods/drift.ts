// Drift and static drift: a NodeClaim marked Drifted=True (drift-step.ts) is replaced by a NodeClaim from
// its NodePool's current template, oldest drift first, as many at once as the Drifted budget allows (the
// fan-out: each its own command and workflow, `replace-<uid>`). Upstream has two methods, Drift for
// dynamic NodePools and StaticDrift for static ones (spec.replicas); here they decide alike, and stay two
// so each is labelled and listed as upstream's is. A replacement that failed holds the node back for its
// backoff (karpenter.azure.com/replacement-backoff-until), and the next try names its replacement afresh.
// Under the Canary rollout policy the NodePool's rollout also bounds them (decisions/rollout.ts): the
// method takes min(budget, the rollout's room), so no node is replaced before its rollout has started,
// beyond the wave's floor, while paused or once a gate halted it (docs/rollouts.md).
import { findCondition, isConditionTrue } from '../../../decisions/conditions.js';
import {
  replacementCandidateFromNodeClaim,
  selectReplacementCandidates,
} from '../../../decisions/disruption-candidates.js';
import { isDisrupting, replacementBackoffOf } from '../../../decisions/disruption-state.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../../../models/karpenter.js';
import { podsBlockDisruption } from '../../../decisions/consolidation/candidates.js';
import { driftCountsOf, rolloutRoom, rolloutTargetOf } from '../../../decisions/rollout.js';
import { sweepClusterPods } from '../cluster-pods.js';
import { candidateOf, commandFor } from './command.js';
import type { DisruptionMethod, MethodPass } from './method.js';

function driftDetail(nodeClaim: NodeClaim): string {
  const drifted = findCondition(nodeClaim.status?.conditions, ConditionTypes.drifted);
  return drifted ? `${drifted.reason}: ${drifted.message}` : 'Drifted';
}

function driftMethodFor(name: string, appliesTo: (nodePool: NodePool) => boolean): DisruptionMethod {
  const method: DisruptionMethod = {
    name,
    reason: 'Drifted',
    class: 'graceful',
    consolidationType: '',
    workflow: { per: 'candidate', instancePrefix: 'replace' },
    appliesTo,
    async computeCommands(pass: MethodPass) {
      // A drifted node whose pods forbid disruption (do-not-disrupt, a PDB allowing no eviction) waits,
      // unless its NodeClaim has a terminationGracePeriod that ends the wait (upstream's eventual
      // disruption). The pods come from the sweep's one read, shared with consolidation, and only a
      // NodePool with a drifted node asks for them: nearly every pass has none.
      const drifted = (c: NodeClaim) => isConditionTrue(c.status?.conditions, ConditionTypes.drifted);
      if (!pass.nodeClaims.some(drifted)) return [];
      const allowed = Math.min(pass.allowed, rolloutRoomOf(pass));
      if (allowed <= 0) return [];
      const pods = await sweepClusterPods(pass.sweep.deps, pass.sweep.view);
      const chosen = selectReplacementCandidates({
        nodePool: pass.nodePool,
        nodeClaims: pass.nodeClaims.map((c) => {
          const backoff = replacementBackoffOf(c);
          const node = pass.nodesFor(c)[0];
          const podsBlock =
            node && drifted(c)
              ? podsBlockDisruption(pods.byNode.get(node.metadata.name) ?? [], pods.pdbs, pass.now)
              : undefined;
          return replacementCandidateFromNodeClaim(c, {
            ...(node ? { node } : {}),
            disrupting: isDisrupting(c, pass.nodesFor(c)),
            ...(backoff.backoffUntil ? { backoffUntil: backoff.backoffUntil } : {}),
            ...(podsBlock !== undefined ? { podsBlock } : {}),
          });
        }),
        allowed,
        now: pass.now,
      });
      const byName = new Map(pass.nodeClaims.map((c) => [c.metadata.name, c]));
      return chosen
        .flatMap((n) => byName.get(n) ?? [])
        .map((nodeClaim) =>
          commandFor(method, pass, {
            candidates: [candidateOf(nodeClaim)],
            replacements: [{}],
            detail: driftDetail(nodeClaim),
            attempt: replacementBackoffOf(nodeClaim).attempts,
          }),
        );
    },
  };
  return method;
}

/** How many drifted nodes the NodePool's rollout lets start being replaced now (Infinity: no bound). */
function rolloutRoomOf(pass: MethodPass): number {
  const { nodePool, sweep } = pass;
  const nodeClass = sweep.view.snapshot.nodeClasses.find(
    (c) => c.metadata.name === nodePool.spec.template.spec.nodeClassRef.name,
  );
  return rolloutRoom({
    nodePool,
    target: rolloutTargetOf(nodePool, nodeClass),
    counts: driftCountsOf(pass.nodeClaims, pass.nodesFor),
    defaultPolicy: sweep.deps.settings.rollout.policy,
  });
}

export const driftMethod = driftMethodFor('drift', (nodePool) => nodePool.spec.replicas === undefined);
export const staticDriftMethod = driftMethodFor(
  'static-drift',
  (nodePool) => nodePool.spec.replicas !== undefined,
);
