// The sweep step that keeps NodePool and AKSNodeClass status (what `kubectl get nodepools,aksnodeclasses`
// shows): classes first, so each NodePool's NodeClassReady reads the class status written in this sweep.
// NodePools whose nodeClassRef is not an AKSNodeClass belong to another controller and are left alone.
// A sweep confined to some NodeClaims (nodeClaimSelector) cannot count a pool's nodes and does not own
// the cluster's classes, so it writes no status at all.
import type { AKSNodeClass } from '../../models/index.js';
import { reconcileNodeClassStatus } from '../status/nodeclass-status.js';
import { reconcileNodePoolStatus } from '../status/nodepool-status.js';
import { nodeClaimsOfPool } from '../../decisions/nodepool-status.js';
import { forEachObject, type StepReport, type SweepStep } from '../sweep-step/sweep-step.js';
import { isManagedNodePool } from '../../decisions/ownership.js';

export const statusStep: SweepStep = {
  name: 'status',
  async run(context) {
    const report: StepReport = { step: 'status', examined: 0, acted: 0, failed: 0 };
    if (context.nodeClaimSelector) return report;
    const { nodeClasses, nodePools } = context.view.snapshot;
    const classes = new Map<string, AKSNodeClass>(nodeClasses.map((c) => [c.metadata.name, c]));
    const classReport = await forEachObject(
      context,
      'status',
      nodeClasses,
      (c) => `AKSNodeClass/${c.metadata.name}`,
      async (nodeClass) => {
        const result = await reconcileNodeClassStatus(context.deps, nodeClass);
        classes.set(nodeClass.metadata.name, result.object);
        return result.written;
      },
    );
    if (context.stopping()) return classReport;
    const nodeClaims = context.view.nodeClaims();
    const poolReport = await forEachObject(
      context,
      'status',
      nodePools.filter(isManagedNodePool),
      (p) => `NodePool/${p.metadata.name}`,
      async (nodePool) => {
        const result = await reconcileNodePoolStatus(
          context.deps,
          nodePool,
          { nodeClaims: nodeClaimsOfPool(nodePool, nodeClaims), nodesOf: (c) => context.view.nodesFor(c) },
          classes.get(nodePool.spec.template.spec.nodeClassRef.name),
        );
        return result.written;
      },
    );
    return {
      step: 'status',
      examined: classReport.examined + poolReport.examined,
      acted: classReport.acted + poolReport.acted,
      failed: classReport.failed + poolReport.failed,
    };
  },
};
