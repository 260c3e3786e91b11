// The read side of the decision records for one question: the endpoint (and anything else that answers
// "why") reads a bounded window of recent records through the port and lets the pure answer pick out what
// concerns the subject. Reading a fixed number of records, not a time range, keeps one request's cost
// bounded however busy the cluster is.
import type { DecisionRecords } from '../../decisions/explain/decision-record.js';
import {
  explainAnswer,
  type ExplainAnswer,
  type ExplainSubject,
} from '../../decisions/explain/explain-answer.js';

export type { ExplainAnswer, ExplainSubject } from '../../decisions/explain/explain-answer.js';

/**
 * Provisioning windows read per question. A pending pod is considered in every window, so this many
 * windows is how far back its wait can be counted; at one window every few seconds under load that is
 * the last several minutes to an hour, enough to tell a pod that just arrived from one stuck for long.
 */
export const EXPLAIN_PROVISIONING_RECORDS = 200;

/**
 * Disruption passes read per question. Passes are per NodePool, so with many NodePools one pool's newest
 * pass is further back; 200 covers dozens of NodePools' recent passes while a request still reads only a
 * few hundred small records.
 */
export const EXPLAIN_DISRUPTION_RECORDS = 200;

/** The answer about `subject` from the recent records, or undefined when nothing is recorded about it. */
export async function explainSubject(
  records: Pick<DecisionRecords, 'recent'>,
  subject: ExplainSubject,
): Promise<ExplainAnswer | undefined> {
  // A pod is answered from provisioning windows alone and a node from disruption passes alone; a NodePool
  // needs both.
  const [provisioning, disruption] = await Promise.all([
    subject.kind === 'node' ? [] : records.recent('provisioning', EXPLAIN_PROVISIONING_RECORDS),
    subject.kind === 'pod' ? [] : records.recent('disruption', EXPLAIN_DISRUPTION_RECORDS),
  ]);
  return explainAnswer(subject, [...provisioning, ...disruption]);
}
