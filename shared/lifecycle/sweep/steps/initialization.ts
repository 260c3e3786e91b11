// Initialization for every registered NodeClaim that is not Initialized yet; a replacement that this
// step initializes wakes the disruption command waiting for it.
import { needsInitialization, reconcileInitialization } from '../../node-join/initialization.js';
import { wakeOnInitialized } from '../../node-join/initialized-wake.js';
import { forEachObject, nameOf, type SweepStep } from '../../sweep-step/sweep-step.js';

export const initializationStep: SweepStep = {
  name: 'initialization',
  run: (context) =>
    forEachObject(
      context,
      'initialization',
      context.view.nodeClaims().filter(needsInitialization),
      nameOf,
      async (nodeClaim) => {
        const result = await reconcileInitialization(
          context.deps,
          nodeClaim,
          context.view.nodesFor(nodeClaim),
        );
        if (result.outcome === 'nodeclaim-gone') {
          context.view.removeNodeClaim(nodeClaim);
          return false;
        }
        if (result.outcome === 'skipped') return false;
        context.view.updateNodeClaim(result.nodeClaim);
        await wakeOnInitialized(context.orchestrations, context.log, result);
        return result.nodeClaim !== nodeClaim;
      },
    ),
};
