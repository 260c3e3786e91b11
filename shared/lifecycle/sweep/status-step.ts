// The sweep step that keeps NodePool and AKSNodeClass status (what `kubectl get nodepools,aksnodeclasses`
// shows): classes first, so each NodePool's NodeClassReady reads the class status written in this sweep.
// NodePools whose nodeClassRef is not an AKSNodeClass belong to another controller and are left alone.
// A sweep confined to some NodeClaims (nodeClaimSelector) cannot count a pool's nodes and does not own
// the cluster's classes, so it writes no status at all.
import type { AKSNodeClass } from '../../models/index.js';
import { reconcileNodeClassStatus } from '../nodeclass-status.js';
import { reconcileNodePoolStatus } from '../nodepool-status.js';
import { nodeClaimsOfPool } from '../../decisions/nodepool-status.js';
import type { StepReport, SweepContext, SweepStep } from './step.js';
import { isManagedNodePool } from '../../decisions/ownership.js';

async function counted(
  report: StepReport,
  context: SweepContext,
  object: string,
  work: () => Promise<boolean>,
): Promise<void> {
  report.examined += 1;
  try {
    if (await work()) report.acted += 1;
  } catch (error) {
    report.failed += 1;
    context.log.warn('sweep step failed for one object', { step: report.step, object, error });
  }
}

export const statusStep: SweepStep = {
  name: 'status',
  async run(context) {
    const report: StepReport = { step: 'status', examined: 0, acted: 0, failed: 0 };
    if (context.nodeClaimSelector) return report;
    const classes = new Map<string, AKSNodeClass>();
    for (const nodeClass of context.view.snapshot.nodeClasses) {
      if (context.stopping()) return report;
      classes.set(nodeClass.metadata.name, nodeClass);
      await counted(report, context, `AKSNodeClass/${nodeClass.metadata.name}`, async () => {
        const result = await reconcileNodeClassStatus(context.deps, nodeClass);
        classes.set(nodeClass.metadata.name, result.object);
        return result.written;
      });
    }
    const nodeClaims = context.view.nodeClaims();
    for (const nodePool of context.view.snapshot.nodePools.filter(isManagedNodePool)) {
      if (context.stopping()) return report;
      await counted(report, context, `NodePool/${nodePool.metadata.name}`, async () => {
        const result = await reconcileNodePoolStatus(
          context.deps,
          nodePool,
          { nodeClaims: nodeClaimsOfPool(nodePool, nodeClaims), nodesOf: (c) => context.view.nodesFor(c) },
          classes.get(nodePool.spec.template.spec.nodeClassRef.name),
        );
        return result.written;
      });
    }
    return report;
  },
};
