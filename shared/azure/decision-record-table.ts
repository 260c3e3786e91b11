// The decision records (../decisions/explain/decision-record.ts) in a Storage table: the app already has
// a storage account and the functions hold Storage Table Data Contributor on it, so keeping them costs no
// new resource or grant, and every instance (and `explain`) reads the same records.
//
// One row per record, partitioned by kind, the row key the time inverted so a query returns the newest
// first and reading "the last N" is one request with `top`. The body is gzipped JSON in binary
// properties: a record of 500 pods is a few tens of KiB of JSON, a few KiB gzipped; properties hold 64 KiB
// each and an entity 1 MiB, so a body is split across at most MAX_CHUNKS properties and a record that is
// still too big loses its subjects (counted) rather than the write failing.
//
// Bounded by age, as the table has no TTL of its own: rows older than the retention are deleted by the
// writer itself, at most PRUNE_BATCH per write and only every PRUNE_EVERY writes, so pruning costs a small,
// steady fraction of the writes and never a scan of the table.
import { gunzipSync, gzipSync } from 'node:zlib';
import type { TableClient, TableEntity, TableEntityResult } from '@azure/data-tables';
import {
  MAX_RECORD_SUBJECTS,
  type DecisionRecord,
  type DecisionRecords,
} from '../decisions/explain/decision-record.js';

const CHUNK_BYTES = 60 * 1024;
const MAX_CHUNKS = 15;
/** Rows deleted per prune at most, and how many writes apart prunes are. */
export const PRUNE_BATCH = 50;
export const PRUNE_EVERY = 10;
/** Larger than any millisecond time this table will see, so inverted keys keep their width. */
const MAX_TIME_MS = 9_999_999_999_999;

interface RecordRow {
  id: string;
  at: string;
  chunks: number;
  bytes: number;
  [chunk: `body${number}`]: Uint8Array;
}

/** What one write cost: the row's gzipped body and the JSON it came from. */
export interface RecordWriteCost {
  jsonBytes: number;
  storedBytes: number;
}

export const invertedTimeKey = (atMs: number): string =>
  String(MAX_TIME_MS - Math.max(0, Math.min(MAX_TIME_MS, Math.floor(atMs)))).padStart(13, '0');

export class DecisionRecordTable implements DecisionRecords {
  private ensured: Promise<void> | undefined;
  private writes = 0;
  /** Per kind: what the writes so far cost, for the bench and the day scenario's report. */
  readonly written = new Map<
    DecisionRecord['kind'],
    { records: number; jsonBytes: number; storedBytes: number }
  >();

  constructor(
    private readonly table: TableClient,
    private readonly retentionMs: number,
    private readonly now: () => Date,
  ) {}

  async write(record: DecisionRecord): Promise<void> {
    await this.ensureTable();
    const { entity, cost } = rowOf(record);
    // Upsert: a replayed window or pass writes the same key and body again, not a second row.
    await this.table.upsertEntity(entity, 'Replace');
    const total = this.written.get(record.kind) ?? { records: 0, jsonBytes: 0, storedBytes: 0 };
    this.written.set(record.kind, {
      records: total.records + 1,
      jsonBytes: total.jsonBytes + cost.jsonBytes,
      storedBytes: total.storedBytes + cost.storedBytes,
    });
    this.writes += 1;
    if (this.writes % PRUNE_EVERY === 1) await this.prune(record.kind);
  }

  async recent(kind: DecisionRecord['kind'], limit: number): Promise<DecisionRecord[]> {
    await this.ensureTable();
    const records: DecisionRecord[] = [];
    const pages = this.table
      .listEntities<RecordRow>({ queryOptions: { filter: `PartitionKey eq '${kind}'` } })
      .byPage({ maxPageSize: Math.min(Math.max(1, limit), 1000) });
    for await (const page of pages) {
      for (const row of page) {
        const record = recordOf(row);
        if (record) records.push(record);
        if (records.length >= limit) return records;
      }
    }
    return records;
  }

  /** How many rows each kind holds now (the day scenario reports the store's size at the end). */
  async size(): Promise<Record<DecisionRecord['kind'], { rows: number; storedBytes: number }>> {
    await this.ensureTable();
    const size = { provisioning: { rows: 0, storedBytes: 0 }, disruption: { rows: 0, storedBytes: 0 } };
    for await (const row of this.table.listEntities<RecordRow>({
      queryOptions: { select: ['PartitionKey', 'bytes'] },
    })) {
      const kind = row.partitionKey === 'disruption' ? 'disruption' : 'provisioning';
      size[kind].rows += 1;
      size[kind].storedBytes += Number(row.bytes ?? 0);
    }
    return size;
  }

  private async prune(kind: DecisionRecord['kind']): Promise<void> {
    // Older rows have larger inverted keys.
    const oldest = invertedTimeKey(this.now().getTime() - this.retentionMs);
    const stale: string[] = [];
    const pages = this.table
      .listEntities({
        queryOptions: { filter: `PartitionKey eq '${kind}' and RowKey gt '${oldest}'`, select: ['RowKey'] },
      })
      .byPage({ maxPageSize: PRUNE_BATCH });
    for await (const page of pages) {
      for (const row of page) if (row.rowKey) stale.push(row.rowKey);
      break;
    }
    await Promise.allSettled(stale.map((rowKey) => this.table.deleteEntity(kind, rowKey)));
  }

  private ensureTable(): Promise<void> {
    this.ensured ??= this.table.createTable().catch((error: unknown) => {
      this.ensured = undefined;
      throw error;
    });
    return this.ensured;
  }
}

/** The row for a record, its subjects cut until its gzipped body fits the entity. */
export function rowOf(record: DecisionRecord): { entity: TableEntity<RecordRow>; cost: RecordWriteCost } {
  let body = record;
  for (;;) {
    const json = Buffer.from(JSON.stringify(body));
    const zipped = gzipSync(json);
    const chunks = Math.ceil(zipped.length / CHUNK_BYTES);
    if (chunks <= MAX_CHUNKS) {
      const entity: TableEntity<RecordRow> = {
        partitionKey: record.kind,
        rowKey: `${invertedTimeKey(Date.parse(record.at))}-${rowSuffix(record.id)}`,
        id: record.id.slice(0, 1000),
        at: record.at,
        chunks,
        bytes: zipped.length,
      };
      for (let index = 0; index < chunks; index++) {
        entity[`body${index}`] = zipped.subarray(index * CHUNK_BYTES, (index + 1) * CHUNK_BYTES);
      }
      return { entity, cost: { jsonBytes: json.length, storedBytes: zipped.length } };
    }
    body = halved(body);
  }
}

/** Half the record's subjects, the rest counted as omitted. */
function halved(record: DecisionRecord): DecisionRecord {
  if (record.kind === 'provisioning') {
    const keep = Math.floor(Math.min(record.pods.length, MAX_RECORD_SUBJECTS) / 2);
    return {
      ...record,
      pods: record.pods.slice(0, keep),
      launches: record.launches.slice(0, Math.max(keep, 1)),
      omittedPods: (record.omittedPods ?? 0) + record.pods.length - keep,
    };
  }
  const keep = Math.floor(Math.min(record.candidates.length, MAX_RECORD_SUBJECTS) / 2);
  return {
    ...record,
    candidates: record.candidates.slice(0, keep),
    omittedCandidates: (record.omittedCandidates ?? 0) + record.candidates.length - keep,
  };
}

/** Row keys may not hold '/', '\', '#', '?' or control characters; IDs are names and times. */
function rowSuffix(id: string): string {
  return encodeURIComponent(id).replace(/%/g, '~').slice(0, 200);
}

function recordOf(row: TableEntityResult<RecordRow>): DecisionRecord | undefined {
  const chunks: Uint8Array[] = [];
  for (let index = 0; index < Number(row.chunks ?? 0); index++) {
    const chunk = row[`body${index}`];
    if (!(chunk instanceof Uint8Array)) return undefined;
    chunks.push(chunk);
  }
  try {
    return JSON.parse(gunzipSync(Buffer.concat(chunks)).toString('utf8')) as DecisionRecord;
  } catch {
    // A row this version cannot read (cut short, or from a newer format) is skipped, not fatal to explain.
    return undefined;
  }
}
