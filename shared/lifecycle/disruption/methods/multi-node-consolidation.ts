// Multi-node consolidation (policy WhenEmptyOrUnderutilized or Balanced), upstream's
// multinodeconsolidation.go: the largest prefix (at least two, at most 100, within the Underutilized
// budget) of the candidates, ordered by price per disruption cost, whose pods fit on the other nodes with
// no new node (delete) or one strictly cheaper one (replace). A command held by the command memory is
// passed over.
import { multiNodeConsolidation } from '../../../decisions/consolidation/underutilized.js';
import type { MoveScore } from '../../../decisions/consolidation/balanced.js';
import { publishBudgetBlocked } from '../blocked-events.js';
import {
  CONSOLIDATION_WORKFLOW,
  consolidatesUnderutilized,
  countScoredMoves,
  noteBudget,
  underutilizedCommand,
  underutilizedPass,
} from './consolidation-pass.js';
import { validateUnderutilized } from './consolidation-validation.js';
import type { DisruptionMethod } from './method.js';

export const multiNodeConsolidationMethod: DisruptionMethod = {
  name: 'multi-node-consolidation',
  reason: 'Underutilized',
  class: 'graceful',
  consolidationType: 'multi',
  workflow: CONSOLIDATION_WORKFLOW,
  appliesTo: consolidatesUnderutilized,
  async computeCommands(pass) {
    if (pass.allowed < 1) {
      const waiting = await underutilizedPass(pass);
      if (waiting !== undefined) {
        noteBudget(pass, waiting.byName.values(), 'Underutilized');
        await publishBudgetBlocked(pass.sweep.deps, pass.nodePool, 'Underutilized');
      }
      return [];
    }
    const underutilized = await underutilizedPass(pass);
    if (!underutilized) return [];
    const scored: MoveScore[] = [];
    const decided = multiNodeConsolidation(underutilized.input, scored);
    countScoredMoves(pass, scored);
    return decided ? [underutilizedCommand(multiNodeConsolidationMethod, pass, underutilized, decided)] : [];
  },
  validate: validateUnderutilized,
};
