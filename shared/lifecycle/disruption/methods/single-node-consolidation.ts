// Single-node consolidation (policy WhenEmptyOrUnderutilized or Balanced), upstream's
// singlenodeconsolidation.go: the first candidate, in order, that consolidates on its own (deleted, or
// replaced by one strictly cheaper node). Each candidate it tried and could not consolidate says why in
// one Unconsolidatable event, naming the cheaper replacement that recent launch failures block when that
// is the reason; a command held by the command memory is passed over.
import {
  singleNodeConsolidation,
  type UnderutilizedSearch,
} from '../../../decisions/consolidation/underutilized.js';
import { budgetBlockedMessage } from '../../../decisions/explain/disruption-record.js';
import {
  CONSOLIDATION_WORKFLOW,
  consolidatesUnderutilized,
  countScoredMoves,
  publishUnconsolidated,
  underutilizedCommand,
  underutilizedPass,
  type UnderutilizedPass,
} from './consolidation-pass.js';
import { validateUnderutilized } from './consolidation-validation.js';
import type { DisruptionMethod, MethodPass } from './method.js';

/**
 * For the decision record: the candidates whose command the memory holds, and those the search did not
 * reach (it stops at its first command, or at its deadline): held by the budget when the command takes
 * what is left of it.
 */
function noteUntried(pass: MethodPass, underutilized: UnderutilizedPass, search: UnderutilizedSearch): void {
  const { recorder } = pass;
  if (!recorder) return;
  const judged = new Set([
    ...search.unconsolidatable.map((u) => u.name),
    ...(search.command?.candidates.map((c) => c.name) ?? []),
  ]);
  const held = new Set(search.held);
  const budgetSpent = (search.command?.candidates.length ?? 0) >= pass.allowed;
  for (const candidate of underutilized.byName.values()) {
    if (judged.has(candidate.name)) continue;
    const node = candidate.input.node?.metadata.name;
    if (held.has(candidate.name)) {
      recorder.keep(
        candidate.name,
        node,
        'CommandBackoff',
        'Consolidation of this node failed recently; the same command is held until its backoff ends',
      );
    } else if (budgetSpent) {
      recorder.keep(candidate.name, node, 'Budget', budgetBlockedMessage('Underutilized'));
    } else {
      recorder.keep(candidate.name, node, 'NotApplicable', 'not reached: the search ended before it');
    }
  }
}

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
    if (pass.recorder) noteUntried(pass, underutilized, search);
    return search.command
      ? [underutilizedCommand(singleNodeConsolidationMethod, pass, underutilized, search.command)]
      : [];
  },
  validate: validateUnderutilized,
};
