// The disruption executor's workflow: one per command of any disruption method (expiration, drift,
// emptiness, consolidation, …): validate it after the method's delay, mark and taint the candidates,
// launch the replacements and wait until they are Initialized, then delete the candidates; or put them
// back in service if a replacement fails.
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import {
  abandonCommand,
  beginCommand,
  checkCommandReplacement,
  completeCommand,
  disruptionOrchestrator,
  launchCommandReplacement,
  validateCommand,
  type AbandonStep,
  type ExecutorInput,
  type ReplacementStep,
} from '../shared/lifecycle/disruption/executor.js';
import { outageTolerantActivity } from '../shared/lifecycle/outage-retry.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { DisruptionNames } from '../shared/runtime/function-names.js';

export const disruptionFunctions: readonly FunctionDefinition[] = [
  orchestration(DisruptionNames.orchestration, disruptionOrchestrator),
  // The deciding method re-checks the command against fresh state.
  outageTolerantActivity(DisruptionNames.validate, (input: ExecutorInput, context) =>
    validateCommand(getDependencies(), input, context),
  ),
  // Marks the candidates and taints their Nodes karpenter.sh/disrupted:NoSchedule.
  outageTolerantActivity(DisruptionNames.begin, (input: ExecutorInput) =>
    beginCommand(getDependencies(), input),
  ),
  // Creates one replacement NodeClaim from the NodePool's current template and launches it.
  outageTolerantActivity(DisruptionNames.launch, (step: ReplacementStep, context) =>
    launchCommandReplacement(getDependencies(), step, context),
  ),
  // Reports whether one replacement is Initialized, pending or failed.
  outageTolerantActivity(DisruptionNames.check, (step: ReplacementStep) =>
    checkCommandReplacement(getDependencies(), step),
  ),
  // Deletes the candidates once every replacement is Initialized.
  outageTolerantActivity(DisruptionNames.complete, (input: ExecutorInput, context) =>
    completeCommand(getDependencies(), input, context),
  ),
  // Puts the candidates back in service after a failed replacement, and remembers the failure.
  outageTolerantActivity(DisruptionNames.abandon, (step: AbandonStep) =>
    abandonCommand(getDependencies(), step),
  ),
];
