// Drift and static drift: a NodeClaim marked Drifted=True (drift-step.ts) is replaced by a NodeClaim from
// its NodePool's current template, oldest drift first, as many at once as the Drifted budget allows (the
// fan-out: each its own command and workflow, `replace-<uid>`). Upstream has two methods, Drift for
// dynamic NodePools and StaticDrift for static ones (spec.replicas); here they decide alike, and stay two
// so each is labelled and listed as upstream's is. A replacement that failed holds the node back for its
// backoff (karpenter.azure.com/replacement-backoff-until), and the next try names its replacement afresh.
// A first try keeps the candidate's zone (upstream gets the same from simulating the candidate's pods):
// replacements launched into any zone left evicted zone-spread pods nowhere to go (maxSkew 1), so a
// 200-node drift grew the cluster by a third and a pod could wait through several waves for a node.
// Under the Canary rollout policy the NodePool's rollout also bounds them (decisions/rollout.ts): the
// method takes min(budget, the rollout's room), so no node is replaced before its rollout has started,
// beyond the wave's floor, while paused or once a gate halted it (docs/rollouts.md).
import { findCondition, isConditionTrue } from '../../../decisions/conditions.js';
import {
  replacementCandidateFromNodeClaim,
  replacementHold,
  selectReplacementCandidates,
  type ReplacementCandidateInput,
} from '../../../decisions/disruption-candidates.js';
import { budgetBlockedMessage } from '../../../decisions/explain/disruption-record.js';
import { isReschedulable } from '../../../decisions/consolidation/pods.js';
import { isDisrupting, replacementBackoffOf } from '../../../decisions/disruption-state.js';
import { ConditionTypes, WellKnown, type NodeClaim, type NodePool } from '../../../models/karpenter.js';
import type { Node } from '../../../models/kube.js';
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
      if (allowed <= 0) {
        const why =
          pass.allowed <= 0
            ? budgetBlockedMessage('Drifted')
            : "The NodePool's rollout lets no more drifted nodes be replaced now";
        for (const c of pass.nodeClaims.filter(drifted)) {
          if (!isDisrupting(c, pass.nodesFor(c))) {
            pass.recorder?.keep(c.metadata.name, pass.nodesFor(c)[0]?.metadata.name, 'Budget', why);
          }
        }
        return [];
      }
      const pods = await sweepClusterPods(pass.sweep.deps, pass.sweep.view);
      const inputs = pass.nodeClaims.map((c) => {
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
      });
      const chosen = selectReplacementCandidates({
        nodePool: pass.nodePool,
        nodeClaims: inputs,
        allowed,
        now: pass.now,
      });
      if (pass.recorder) noteHeld(pass, inputs, new Set(chosen), allowed);
      const byName = new Map(pass.nodeClaims.map((c) => [c.metadata.name, c]));
      return chosen
        .flatMap((n) => byName.get(n) ?? [])
        .map((nodeClaim) => {
          // The first try keeps the candidate's zone, so its zone-spread pods can go back there; a
          // retry after a failed replacement (that zone may have no capacity) goes wherever it may.
          const attempt = replacementBackoffOf(nodeClaim).attempts;
          const zone = attempt === 0 ? zoneOf(nodeClaim, pass.nodesFor(nodeClaim)[0]) : undefined;
          const command = commandFor(method, pass, {
            candidates: [candidateOf(nodeClaim)],
            replacements: [zone ? { zone } : {}],
            detail: driftDetail(nodeClaim),
            attempt,
          });
          const node = pass.nodesFor(nodeClaim)[0];
          const moved = (node ? (pods.byNode.get(node.metadata.name) ?? []) : []).filter(isReschedulable);
          pass.recorder?.command(command, { podsMoved: moved.map((p) => `${p.namespace}/${p.name}`) });
          return command;
        });
    },
  };
  return method;
}

/** The zone the candidate runs in, from its NodeClaim's labels or else its Node's. */
function zoneOf(nodeClaim: NodeClaim, node: Node | undefined): string | undefined {
  return nodeClaim.metadata.labels?.[WellKnown.zoneLabel] ?? node?.metadata.labels?.[WellKnown.zoneLabel];
}

/** For the decision record: each drifted node not chosen, and why (the budget, once the eligible are). */
function noteHeld(
  pass: MethodPass,
  inputs: readonly ReplacementCandidateInput[],
  chosen: ReadonlySet<string>,
  allowed: number,
): void {
  const why =
    allowed < pass.allowed
      ? "The NodePool's rollout lets no more drifted nodes be replaced now"
      : budgetBlockedMessage('Drifted');
  const byName = new Map(pass.nodeClaims.map((c) => [c.metadata.name, c]));
  for (const input of inputs) {
    if (input.driftedSince === undefined || chosen.has(input.name)) continue;
    const held = replacementHold(input, pass.now);
    const nodeClaim = byName.get(input.name);
    const nodeName = nodeClaim ? pass.nodesFor(nodeClaim)[0]?.metadata.name : undefined;
    if (held) pass.recorder?.keep(input.name, nodeName, held.cause, held.message);
    else pass.recorder?.keep(input.name, nodeName, 'Budget', why);
  }
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
