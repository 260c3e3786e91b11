// When a NodeClaim is gone, the disruption budget slot it held is free: its NodePool's next disruption
// (the next drift replacement, the next empty node) starts now, on the deletion's bridge event, instead
// of at the next sweep. The run is the sweep's own disruption step confined to that NodePool's
// NodeClaims; it needs no lease, as every write is guarded and a concurrent sweep picks the same nodes
// (oldest drift first, ties by name), so the two cannot together disrupt more than the budget allows.
import { WellKnown } from '../../models/karpenter.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { runSweepSteps, type SweepResult } from '../sweep/sweep.js';
import { disruptionStep } from '../disruption/disruption-step.js';

export async function disruptAfterDeletion(
  deps: LifecycleDependencies,
  context: Pick<HandlerContext, 'orchestrations' | 'log'>,
  nodePool: string,
): Promise<SweepResult> {
  return runSweepSteps(deps, context, {
    steps: [disruptionStep],
    nodeClaimSelector: `${WellKnown.nodePoolLabel}=${nodePool}`,
  });
}
