// Initialization for every registered NodeClaim that is not Initialized yet.
import { needsInitialization, reconcileInitialization } from '../../node-join/initialization.js';
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
        return result.nodeClaim !== nodeClaim;
      },
    ),
};
