// Single-node consolidation (policy WhenEmptyOrUnderutilized or Balanced), upstream's
// singlenodeconsolidation.go: the first candidate, in order, that consolidates on its own (deleted, or
// replaced by one strictly cheaper node). Each candidate it tried and could not consolidate says why in
// one Unconsolidatable event, naming the cheaper replacement that recent launch failures block when that
// is the reason; a command held by the command memory is passed over.
import { singleNodeConsolidation } from '../../../decisions/consolidation/underutilized.js';
import {
  CONSOLIDATION_WORKFLOW,
  consolidatesUnderutilized,
  countScoredMoves,
  publishUnconsolidated,
  underutilizedCommand,
  underutilizedPass,
} from './consolidation-pass.js';
import { validateUnderutilized } from './consolidation-validation.js';
import type { DisruptionMethod } from './method.js';

export const singleNodeConsolidationMethod: DisruptionMethod = {
  name: 'single-node-consolidation',
  reason: 'Underutilized',
  class: 'graceful',
  consolidationType: 'single',
  workflow: CONSOLIDATION_WORKFLOW,
  appliesTo: consolidatesUnderutilized,
  async computeCommands(pass) {
    // Multi-node, before it, said so when the budget allows nothing.
    if (pass.allowed < 1) return [];
    const underutilized = await underutilizedPass(pass);
    if (!underutilized) return [];
    const search = singleNodeConsolidation(underutilized.input, []);
    countScoredMoves(pass, search.scored);
    await publishUnconsolidated(pass, underutilized, search.unconsolidatable);
    return search.command
      ? [underutilizedCommand(singleNodeConsolidationMethod, pass, underutilized, search.command)]
      : [];
  },
  validate: validateUnderutilized,
};
