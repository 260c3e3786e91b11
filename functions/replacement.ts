// The replacement workflow of one disrupted NodeClaim: taint it, launch its replacement, wait until the
// replacement is Initialized, delete the old one; or put the old node back in service if that fails.
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import {
  abandonReplacement,
  beginReplacement,
  checkReplacement,
  completeReplacement,
  launchReplacement,
  replacementOrchestrator,
  type AbandonInput,
  type ReplacementInput,
} from '../shared/lifecycle/disruption/replacement.js';
import { outageTolerantActivity } from '../shared/lifecycle/outage-retry.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { ReplacementNames } from '../shared/runtime/function-names.js';

export const replacementFunctions: readonly FunctionDefinition[] = [
  orchestration(ReplacementNames.orchestration, replacementOrchestrator),
  // Marks the old NodeClaim and taints its Node karpenter.sh/disrupted:NoSchedule.
  outageTolerantActivity(ReplacementNames.begin, (input: ReplacementInput) =>
    beginReplacement(getDependencies(), input),
  ),
  // Creates the replacement NodeClaim from the NodePool's current template and launches it.
  outageTolerantActivity(ReplacementNames.launch, (input: ReplacementInput, context) =>
    launchReplacement(getDependencies(), input, context),
  ),
  // Reports whether the replacement NodeClaim is Initialized, pending or failed.
  outageTolerantActivity(ReplacementNames.check, (input: ReplacementInput) =>
    checkReplacement(getDependencies(), input),
  ),
  // Deletes the old NodeClaim once its replacement is Initialized.
  outageTolerantActivity(ReplacementNames.complete, (input: ReplacementInput, context) =>
    completeReplacement(getDependencies(), input, context),
  ),
  // Puts the old node back in service after a failed replacement, with a backoff.
  outageTolerantActivity(ReplacementNames.abandon, (input: AbandonInput) =>
    abandonReplacement(getDependencies(), input),
  ),
];
