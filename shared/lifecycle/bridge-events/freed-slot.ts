// When a NodeClaim is gone, the disruption budget slot it held is free: its NodePool's next disruption
// (the next drift replacement, the next empty node) starts now, on the deletion's bridge event, instead
// of at the next sweep. The run is the sweep's own disruption step confined to that NodePool's
// NodeClaims, read fresh so that the deletion that freed the slot is in them (the watch-fed cache can
// still hold the NodeClaim when its deletion's event arrives, and the pass then finds no room); it needs
// no lease, as every write is guarded and a concurrent sweep picks the same nodes
// (oldest drift first, ties by name), so the two cannot together disrupt more than the budget allows.
// Deletions that come while the NodePool's pass runs in this process ask for one more pass after it
// instead of running their own (coalesced-runs.ts says why).
import { WellKnown } from '../../models/karpenter.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { runSweepSteps, type SweepResult } from '../sweep/sweep.js';
import { disruptionStep } from '../disruption/disruption-step.js';
import { coalescedRuns, type CoalescedOutcome, type CoalescedRuns } from './coalesced-runs.js';

/** Passes one event may run for the deletions that keep coming while it runs. */
const FREED_SLOT_MAX_PASSES = 3;

/** Per app (its dependencies), as the budget marks' rounds are: tests run several apps in one process. */
const passesOf = new WeakMap<LifecycleDependencies, CoalescedRuns<string>>();

export async function disruptAfterDeletion(
  deps: LifecycleDependencies,
  context: Pick<HandlerContext, 'orchestrations' | 'log'>,
  nodePool: string,
): Promise<CoalescedOutcome<SweepResult>> {
  let passes = passesOf.get(deps);
  if (!passes) {
    passes = coalescedRuns<string>(FREED_SLOT_MAX_PASSES);
    passesOf.set(deps, passes);
  }
  return passes.run(nodePool, () =>
    runSweepSteps(deps, context, {
      steps: [disruptionStep],
      nodeClaimSelector: `${WellKnown.nodePoolLabel}=${nodePool}`,
      fresh: true,
    }),
  );
}
