// NodeOverlay status: each overlay's ValidationSucceeded and Ready, judged against every NodePool the
// sweep read (../../status/node-overlay-status.ts). Like the NodePool status step, a sweep confined to some NodeClaims does
// not own the cluster's objects and writes nothing. A written status means an overlay is new or changed
// (its generation is on the conditions), which may let pending pods fit that did not: the provisioning
// batcher is signalled, as a pod event would, since no pod changed to signal it.
import { reconcileNodeOverlayStatuses } from '../../status/node-overlay-status.js';
import { signalProvisioning } from '../../provisioning/signal.js';
import type { StepReport, SweepStep } from '../../sweep-step/sweep-step.js';

export const nodeOverlayStatusStep: SweepStep = {
  name: 'node-overlay-status',
  async run(context) {
    const report: StepReport = { step: 'node-overlay-status', examined: 0, acted: 0, failed: 0 };
    if (context.nodeClaimSelector) return report;
    try {
      const result = await reconcileNodeOverlayStatuses(context.deps, context.view.snapshot.nodePools);
      if (result.written > 0) {
        await signalProvisioning(
          context.orchestrations,
          context.deps.settings.provisioning,
          context.deps.now(),
        );
      }
      return { ...report, examined: result.examined, acted: result.written };
    } catch (error) {
      context.log.warn('sweep step failed', { step: report.step, error });
      return { ...report, failed: 1 };
    }
  },
};
