// The sweep's drift marking: Drifted=True with the reason for launched NodeClaims that no longer match
// their NodePool or AKSNodeClass, the condition removed from those that match again, and hash stamps of
// another hash version replaced (decisions/drift.ts decides all three), written as one change of the
// NodeClaim writer (the restamp, metadata, before the condition, status).
import { applyDriftCondition, evaluateDrift, hashAnnotationsToRestamp } from '../../decisions/drift.js';
import type { AKSNodeClass } from '../../models/aks-node-class.js';
import { WellKnown, type NodeClaim, type NodePool } from '../../models/karpenter.js';
import { writeNodeClaim } from '../nodeclaims/nodeclaim-writes.js';
import { forEachObject, type SweepStep } from '../sweep-step/sweep-step.js';
import { nodePoolsInScope } from './scope.js';

export const driftStep: SweepStep = {
  name: 'drift',
  run(context) {
    const pools = new Map(nodePoolsInScope(context).map((p) => [p.metadata.name, p]));
    const classes = new Map(context.view.snapshot.nodeClasses.map((c) => [c.metadata.name, c]));
    const work: { nodeClaim: NodeClaim; nodePool: NodePool; nodeClass: AKSNodeClass | undefined }[] = [];
    for (const nodeClaim of context.view.nodeClaims()) {
      if (nodeClaim.metadata.deletionTimestamp || !nodeClaim.status?.providerID) continue;
      const nodePool = pools.get(nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel] ?? '');
      if (!nodePool) continue;
      work.push({
        nodeClaim,
        nodePool,
        nodeClass: classes.get(nodePool.spec.template.spec.nodeClassRef.name),
      });
    }
    return forEachObject(
      context,
      'drift',
      work,
      (w) => w.nodeClaim.metadata.name,
      async ({ nodeClaim, nodePool, nodeClass }) => {
        const { deps } = context;
        // The provider is asked last, as core asks CloudProvider.IsDrifted: its image and Kubernetes
        // version checks need the Node (its kubelet's version), which the view has.
        const node = context.view.nodesFor(nodeClaim)[0];
        const provider = nodeClass ? deps.cloud.isDrifted(nodeClaim, nodeClass, node) : undefined;
        const result = evaluateDrift(nodeClaim, nodePool, nodeClass, provider);
        const conditionChanges =
          applyDriftCondition(nodeClaim.status?.conditions, result, deps.now()) !==
          nodeClaim.status?.conditions;
        // The condition and the restamp in one change: the restamp is decided on the NodeClaim as the
        // condition leaves it (a drifted one keeps the stamps it drifted from).
        const write = await writeNodeClaim(deps.objects, nodeClaim, (latest) => {
          const status = {
            ...latest.status,
            conditions: applyDriftCondition(latest.status?.conditions, result, deps.now()),
          };
          const restamp = hashAnnotationsToRestamp({ ...latest, status }, nodePool, nodeClass);
          return {
            status,
            ...(restamp && { annotations: { ...latest.metadata.annotations, ...restamp } }),
          };
        });
        if (write.outcome === 'gone') {
          context.view.removeNodeClaim(nodeClaim);
          return false;
        }
        if (write.outcome === 'unchanged') return false;
        context.view.updateNodeClaim(write.nodeClaim);
        if (conditionChanges && result.drifted) {
          deps.log.info('NodeClaim drifted', {
            nodeClaim: nodeClaim.metadata.name,
            reason: result.reason,
            detail: result.message,
          });
        }
        return true;
      },
    );
  },
};
