// Every invariant of the day over one history, in the summary's order. Pure: the scenario runs it on the
// history so far while the day plays (to say early what broke) and once more at the end.
//
// Every invariant is handed one end time, `at`: at the end, the teardown's start, when the harness begins
// to take away what the app is judged by (the day deletes its workloads with their PDBs; then, as a user
// would, every budget goes to 0 and every NodeClaim is deleted). Marks and evictions after it are counted
// where they are reported but not judged: the app cannot keep a budget or a PDB the user just took away.
// The day's figures end their expiries at the same time (disruptionsOf).
import { checkBudgets } from './budgets.js';
import { checkChurn, type ChurnOptions } from './churn.js';
import { checkDestinations } from './destinations.js';
import { checkDoNotDisrupt } from './do-not-disrupt.js';
import { checkEndState } from './end-state.js';
import { firstOrigin, type DayHistory, type InvariantResult } from './history.js';
import { checkPdbs } from './pdbs.js';
import { checkPending, type PendingFigures } from './pending.js';
import { checkArmRates, checkKubernetesRates } from './request-rates.js';
import { checkVmPuts } from './vm-puts.js';

export interface CheckOptions {
  /** How far the sweep's view may lag the recorder's (a mark judged at its time and this much earlier). */
  slackMs: number;
  pendingBoundMs: number;
  stuckMs: number;
  churn: Omit<ChurnOptions, 'origin'>;
  /**
   * The end time: now while the day plays (what comes in after it is judged at the next check); at the
   * end, the teardown's start. Pods still pending then have waited until then; marks and evictions after
   * it are counted, not judged.
   */
  at: number;
  /** Whether the end-of-day checks apply yet. */
  final: boolean;
}

export function checkDay(
  history: DayHistory,
  options: CheckOptions,
): { invariants: InvariantResult[]; pending: PendingFigures } {
  const origin = firstOrigin(history);
  const pending = checkPending(history, options.pendingBoundMs, options.at);
  const invariants = [
    checkBudgets(history, options.slackMs, origin, options.at),
    checkChurn(history, { ...options.churn, origin }),
    checkDestinations(history, options.slackMs, origin),
    checkDoNotDisrupt(history, origin),
    pending.invariant,
    checkVmPuts(history),
    ...(options.final ? [checkEndState(history, options.stuckMs)] : []),
    checkArmRates(history),
    checkKubernetesRates(history.apiServer, options.final),
    checkPdbs(history, origin, options.at),
  ];
  return { invariants, pending: pending.figures };
}

export type { DayHistory, InvariantResult } from './history.js';
