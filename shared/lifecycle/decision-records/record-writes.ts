// Writing a decision record is never part of the decision: a window or pass whose record cannot be
// written (Storage away, throttled) has still decided and acted, so the failure is logged and counted,
// and explain says less about that moment rather than the autoscaler doing less. The warning is the
// signal (the workbook's warnings query shows it); no retry, as the next window or pass writes afresh.
import type { DecisionRecord } from '../../decisions/explain/decision-record.js';
import type { LifecycleDependencies } from '../dependencies.js';

export async function writeDecisionRecord(
  deps: Pick<LifecycleDependencies, 'decisionRecords' | 'log'>,
  record: DecisionRecord,
): Promise<boolean> {
  try {
    await deps.decisionRecords.write(record);
    return true;
  } catch (error) {
    deps.log.warn('decision record not written; explain will not see this decision', {
      kind: record.kind,
      id: record.id,
      error,
    });
    return false;
  }
}
