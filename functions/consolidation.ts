// The consolidation workflow of one NodePool: wait the validation delay, then re-validate the command
// against fresh state and delete what still qualifies, or replace the candidates with one cheaper node
// (wait for it, then delete them; put them back in service if it fails).
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import {
  abandonConsolidationReplacement,
  completeConsolidationReplacement,
  consolidationOrchestrator,
  executeConsolidation,
  type ConsolidationCommand,
  type ConsolidationReplacementInput,
} from '../shared/lifecycle/disruption/consolidation.js';
import { answeringTransientErrors } from '../shared/lifecycle/outage-retry.js';
import { activity, orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { ConsolidationNames } from '../shared/runtime/function-names.js';

export const consolidationFunctions: readonly FunctionDefinition[] = [
  orchestration(ConsolidationNames.orchestration, consolidationOrchestrator),
  activity(
    ConsolidationNames.execute,
    answeringTransientErrors((input: ConsolidationCommand, context) =>
      executeConsolidation(getDependencies(), input, context),
    ),
  ),
  activity(
    ConsolidationNames.complete,
    answeringTransientErrors((input: ConsolidationReplacementInput, context) =>
      completeConsolidationReplacement(getDependencies(), input, context),
    ),
  ),
  activity(
    ConsolidationNames.abandon,
    answeringTransientErrors((input: ConsolidationReplacementInput) =>
      abandonConsolidationReplacement(getDependencies(), input),
    ),
  ),
];
