// Decision records kept in memory, for unit tests and benches that have no Storage table: the same row
// encoding as the table (rowOf), so what a bench reports as bytes per write is what Azure would store.
import { rowOf } from '../../shared/azure/decision-record-table.js';
import type { DecisionRecord, DecisionRecords } from '../../shared/decisions/explain/decision-record.js';

export class MemoryDecisionRecords implements DecisionRecords {
  /** Newest last, as written. */
  readonly records: DecisionRecord[] = [];
  readonly cost = new Map<
    DecisionRecord['kind'],
    { records: number; jsonBytes: number; storedBytes: number }
  >();

  write(record: DecisionRecord): Promise<void> {
    const { cost } = rowOf(record);
    const total = this.cost.get(record.kind) ?? { records: 0, jsonBytes: 0, storedBytes: 0 };
    this.cost.set(record.kind, {
      records: total.records + 1,
      jsonBytes: total.jsonBytes + cost.jsonBytes,
      storedBytes: total.storedBytes + cost.storedBytes,
    });
    this.records.push(structuredClone(record));
    return Promise.resolve();
  }

  recent(kind: DecisionRecord['kind'], limit: number): Promise<DecisionRecord[]> {
    return Promise.resolve(
      this.records
        .filter((record) => record.kind === kind)
        .reverse()
        .slice(0, limit),
    );
  }
}
