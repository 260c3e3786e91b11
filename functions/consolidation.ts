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
import { outageTolerantActivity } from '../shared/lifecycle/outage-retry.js';
import { orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { ConsolidationNames } from '../shared/runtime/function-names.js';

export const consolidationFunctions: readonly FunctionDefinition[] = [
  orchestration(ConsolidationNames.orchestration, consolidationOrchestrator),
  outageTolerantActivity(ConsolidationNames.execute, (input: ConsolidationCommand, context) =>
    executeConsolidation(getDependencies(), input, context),
  ),
  outageTolerantActivity(ConsolidationNames.complete, (input: ConsolidationReplacementInput, context) =>
    completeConsolidationReplacement(getDependencies(), input, context),
  ),
  outageTolerantActivity(ConsolidationNames.abandon, (input: ConsolidationReplacementInput) =>
    abandonConsolidationReplacement(getDependencies(), input),
  ),
];
