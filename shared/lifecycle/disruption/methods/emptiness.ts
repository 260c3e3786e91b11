// Emptiness, upstream's first method: NodeClaims without reschedulable pods (DaemonSet, mirror, finished
// and terminating pods other than StatefulSet ones do not count) are deleted, as many in one command as
// the Empty budget allows, longest consolidatable first, under any consolidation policy. The command waits
// the validation delay and keeps only the candidates still empty then.
import { selectEmpty, type Candidate } from '../../../decisions/consolidation/candidates.js';
import { publishBudgetBlocked } from '../blocked-events.js';
import { candidateOf, commandFor } from './command.js';
import {
  CONSOLIDATION_WORKFLOW,
  consolidates,
  consolidationCandidates,
  noteBudget,
  podsMovedBy,
} from './consolidation-pass.js';
import { validateEmpty } from './consolidation-validation.js';
import type { DisruptionMethod } from './method.js';

export const emptinessMethod: DisruptionMethod = {
  name: 'emptiness',
  reason: 'Empty',
  class: 'graceful',
  consolidationType: 'empty',
  workflow: CONSOLIDATION_WORKFLOW,
  appliesTo: consolidates,
  async computeCommands(pass) {
    const { verdicts } = await consolidationCandidates(pass);
    if (!verdicts.some((v) => v.kind === 'candidate' && v.empty)) return [];
    const chosen = selectEmpty(verdicts, pass.allowed);
    // The empty candidates the budget leaves out wait for it.
    const left = new Set(chosen.map((c) => c.name));
    noteBudget(
      pass,
      verdicts.filter((v): v is Candidate => v.kind === 'candidate' && v.empty && !left.has(v.name)),
      'Empty',
    );
    if (chosen.length === 0) {
      await publishBudgetBlocked(pass.sweep.deps, pass.nodePool, 'Empty');
      return [];
    }
    const command = commandFor(emptinessMethod, pass, {
      candidates: chosen.map((c) => candidateOf(c.input.nodeClaim)),
      detail: 'node is empty',
      validateAfterSeconds: pass.sweep.deps.settings.disruption.consolidationValidationSeconds,
    });
    pass.recorder?.command(command, { podsMoved: podsMovedBy(chosen) });
    return [command];
  },
  validate: validateEmpty,
};
