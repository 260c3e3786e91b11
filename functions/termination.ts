// The termination workflow of a deleted NodeClaim: drain its Node, delete its VM, then delete the Node
// and release the NodeClaim's finalizer. Both versions are registered: new terminations start as the
// second, and the first stays for the terminations started before the upgrade (docs/design.md, "Names
// are history").
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import { drainNodeClaim } from '../shared/lifecycle/termination/drain.js';
import {
  deleteNodeClaimVm,
  finishNodeClaimTermination,
  TerminationActivities,
  terminationOrchestrator,
} from '../shared/lifecycle/termination/termination.js';
import {
  advanceNodeClaimTermination,
  TerminationV2Activities,
  terminationV2Orchestrator,
} from '../shared/lifecycle/termination/termination-v2.js';
import { outageTolerantRegistration } from '../shared/lifecycle/durable/durable-activity.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { TerminationNames } from '../shared/runtime/function-names.js';

export function terminationFunctions(getDependencies: DependencySource): readonly FunctionDefinition[] {
  return [
    orchestration(TerminationNames.orchestration, terminationOrchestrator),
    // One drain pass over the Node (taint, evict, delete what is left after the grace period).
    outageTolerantRegistration(TerminationActivities.drain, (input) =>
      drainNodeClaim(getDependencies(), input),
    ),
    // Stops the launch monitor and deletes the VM; reports 'Gone' once ARM no longer has it.
    outageTolerantRegistration(TerminationActivities.deleteVm, (input, context) =>
      deleteNodeClaimVm(getDependencies(), input, context),
    ),
    // Deletes the Node and removes the NodeClaim's termination finalizer.
    outageTolerantRegistration(TerminationActivities.finish, (input) =>
      finishNodeClaimTermination(getDependencies(), input),
    ),
    orchestration(TerminationNames.orchestrationV2, terminationV2Orchestrator),
    // A drain pass, then (once drained) the VM's deletion, a bounded wait for it to go, and the finish.
    outageTolerantRegistration(TerminationV2Activities.advance, (input, context) =>
      advanceNodeClaimTermination(getDependencies(), input, context),
    ),
  ];
}
