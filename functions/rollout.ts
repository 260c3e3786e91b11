// The rollout workflow of a NodePool change: a canary, a soak under health gates, then waves at the
// Drifted budget; halted, or rolled back, when a gate fails (docs/rollouts.md).
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import {
  beginNodePoolRollout,
  pollNodePoolRollout,
} from '../shared/lifecycle/disruption/rollout/rollout-activities.js';
import {
  RolloutActivities,
  rolloutOrchestrator,
} from '../shared/lifecycle/disruption/rollout/rollout-workflow.js';
import { outageTolerantRegistration } from '../shared/lifecycle/durable/durable-activity.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { RolloutNames } from '../shared/runtime/function-names.js';

export function rolloutFunctions(getDependencies: DependencySource): readonly FunctionDefinition[] {
  return [
    orchestration(RolloutNames.orchestration, rolloutOrchestrator),
    // Writes the rollout's canary, or carries on with (or resumes) the one the NodePool holds.
    outageTolerantRegistration(RolloutActivities.begin, (input) =>
      beginNodePoolRollout(getDependencies(), input),
    ),
    // Judges the gates, ends a wave after its soak and starts the next, ends the rollout.
    outageTolerantRegistration(RolloutActivities.poll, (input) =>
      pollNodePoolRollout(getDependencies(), input),
    ),
  ];
}
