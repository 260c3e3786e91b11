// Launched NodeClaims whose outcome is still unknown: each needs a live launch monitor, or a new one that
// reads the outcome from ARM (see ensureLaunchMonitor). One status read per such NodeClaim per sweep.
import { isLaunchInFlight } from '../../../decisions/launch-in-flight.js';
import { isManagedNodeClaim } from '../../../decisions/ownership.js';
import type { NodeClaim } from '../../../models/index.js';
import { ensureLaunchMonitor } from '../../launch/launch-monitor-start.js';
import { forEachObject, nameOf, type SweepStep } from '../../sweep-step/sweep-step.js';

export const launchMonitorStep: SweepStep = {
  name: 'launch-monitor',
  run: (context) =>
    forEachObject(
      context,
      'launch-monitor',
      context.view.nodeClaims().filter(awaitsLaunchOutcome),
      nameOf,
      async (nodeClaim) => {
        const outcome = await ensureLaunchMonitor(context.deps, nodeClaim, {
          orchestrations: context.orchestrations,
        });
        return outcome === 'started' || outcome === 'terminated';
      },
    ),
};

function awaitsLaunchOutcome(nodeClaim: NodeClaim): boolean {
  return (
    isManagedNodeClaim(nodeClaim) && !nodeClaim.metadata.deletionTimestamp && isLaunchInFlight(nodeClaim)
  );
}
