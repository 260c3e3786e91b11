// The disruption executor's workflow: one per command of any disruption method (expiration, drift,
// emptiness, consolidation, …): validate it after the method's delay, mark and taint the candidates,
// launch the replacements and wait until they are Initialized, then delete the candidates; or put them
// back in service if a replacement fails.
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import {
  abandonCommand,
  beginCommand,
  checkCommandReplacement,
  completeCommand,
  disruptionOrchestrator,
  launchCommandReplacement,
  DisruptionActivities,
  validateCommand,
} from '../shared/lifecycle/disruption/executor.js';
import {
  checkCommandReplacementNow,
  disruptionOrchestratorV2,
  DisruptionV2Activities,
} from '../shared/lifecycle/disruption/executor-v2.js';
import { outageTolerantRegistration } from '../shared/lifecycle/durable/durable-activity.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { DisruptionNames } from '../shared/runtime/function-names.js';

export function disruptionFunctions(getDependencies: DependencySource): readonly FunctionDefinition[] {
  return [
    orchestration(DisruptionNames.orchestration, disruptionOrchestrator),
    // The deciding method re-checks the command against fresh state.
    outageTolerantRegistration(DisruptionActivities.validate, (input, context) =>
      validateCommand(getDependencies(), input, context),
    ),
    // Marks the candidates and taints their Nodes karpenter.sh/disrupted:NoSchedule.
    outageTolerantRegistration(DisruptionActivities.begin, (input) => beginCommand(getDependencies(), input)),
    // Creates one replacement NodeClaim from the NodePool's current template and launches it.
    outageTolerantRegistration(DisruptionActivities.launch, (step, context) =>
      launchCommandReplacement(getDependencies(), step, context),
    ),
    // Reports whether one replacement is Initialized, pending or failed (the first version: waits inside).
    outageTolerantRegistration(DisruptionActivities.check, (step) =>
      checkCommandReplacement(getDependencies(), step),
    ),
    // The second version, woken by its replacements; the first stays for the instances started before it.
    orchestration(DisruptionNames.orchestrationV2, disruptionOrchestratorV2),
    // The second version's check: one read of one replacement.
    outageTolerantRegistration(DisruptionV2Activities.checkNow, (step) =>
      checkCommandReplacementNow(getDependencies(), step),
    ),
    // Deletes the candidates once every replacement is Initialized.
    outageTolerantRegistration(DisruptionActivities.complete, (input, context) =>
      completeCommand(getDependencies(), input, context),
    ),
    // Puts the candidates back in service after a failed replacement, and remembers the failure.
    outageTolerantRegistration(DisruptionActivities.abandon, (step) =>
      abandonCommand(getDependencies(), step),
    ),
  ];
}
