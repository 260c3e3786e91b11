// The consolidation workflow of one NodePool: wait the validation delay, then re-validate the command
// against fresh state and delete what still qualifies.
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import {
  consolidationOrchestrator,
  executeConsolidation,
  type ConsolidationCommand,
} from '../shared/lifecycle/disruption/consolidation.js';
import { activity, orchestration, type FunctionDefinition } from '../shared/runtime/definitions.js';
import { ConsolidationNames } from '../shared/runtime/function-names.js';

export const consolidationFunctions: readonly FunctionDefinition[] = [
  orchestration(ConsolidationNames.orchestration, consolidationOrchestrator),
  activity(ConsolidationNames.execute, (input: ConsolidationCommand, context) =>
    executeConsolidation(getDependencies(), input, context),
  ),
];
