// The record of offerings to avoid after recent launch failures (blocks, see offering-blocks.ts), in a
// Storage table so every function instance shares it and it survives restarts. Expired rows are ignored
// on read and removed opportunistically; quota rows are also removed when cores of their quota are freed.
import { TableClient, type TableEntity, type TableEntityResult } from '@azure/data-tables';
import { blockKey, type OfferingBlock } from '../decisions/offering-blocks.js';

export interface UnavailableOffering {
  block: OfferingBlock;
  reason: string;
  message: string;
  expiresAt: Date;
  /** The quota the block stands for ("family:<skuFamily>", "regional", "lowPriority"), if any. */
  quota?: string;
}

interface BlockRow {
  block: string;
  reason: string;
  message: string;
  expiresAt: Date;
  quota?: string;
}

// Row keys may not contain '/', '\', '#' or '?'.
const rowKeyOf = (key: string): string => encodeURIComponent(key);
const partition = 'blocks';

function parseBlock(text: string | undefined): OfferingBlock | undefined {
  if (!text) return undefined;
  try {
    const block = JSON.parse(text) as OfferingBlock;
    return typeof block.capacityType === 'string' && block.where !== undefined && block.sizes !== undefined
      ? block
      : undefined;
  } catch {
    return undefined;
  }
}

export class UnavailableOfferingsStore {
  private ensured: Promise<void> | undefined;

  constructor(private readonly table: TableClient) {}

  async mark(record: UnavailableOffering): Promise<void> {
    await this.ensureTable();
    const entity: TableEntity<BlockRow> = {
      partitionKey: partition,
      rowKey: rowKeyOf(blockKey(record.block)),
      block: JSON.stringify(record.block),
      reason: record.reason,
      message: record.message.slice(0, 4000),
      expiresAt: record.expiresAt,
      ...(record.quota ? { quota: record.quota } : {}),
    };
    // Upsert-replace: a later failure extends the TTL; concurrent writers converge on one row.
    await this.table.upsertEntity(entity, 'Replace');
  }

  async listActive(now: Date): Promise<UnavailableOffering[]> {
    const active: UnavailableOffering[] = [];
    const stale: string[] = [];
    for (const row of await this.rows()) {
      const block = parseBlock(row.block);
      const expiresAt = new Date(row.expiresAt);
      if (block && expiresAt > now) {
        active.push({
          block,
          reason: row.reason,
          message: row.message,
          expiresAt,
          ...(row.quota ? { quota: row.quota } : {}),
        });
      } else if (row.rowKey) {
        stale.push(row.rowKey);
      }
    }
    await Promise.allSettled(stale.map((rowKey) => this.table.deleteEntity(partition, rowKey)));
    return active;
  }

  /** Removes the blocks of these quotas (cores were freed, so what no longer fitted may fit again). */
  async forgetQuota(quotas: readonly string[]): Promise<number> {
    const wanted = new Set(quotas);
    const rows = (await this.rows()).filter((row) => row.quota !== undefined && wanted.has(row.quota));
    await Promise.allSettled(rows.map((row) => this.table.deleteEntity(partition, row.rowKey ?? '')));
    return rows.length;
  }

  private async rows(): Promise<TableEntityResult<BlockRow>[]> {
    await this.ensureTable();
    const rows: TableEntityResult<BlockRow>[] = [];
    for await (const row of this.table.listEntities<BlockRow>({
      queryOptions: { filter: `PartitionKey eq '${partition}'` },
    })) {
      rows.push(row);
    }
    return rows;
  }

  private ensureTable(): Promise<void> {
    this.ensured ??= this.table.createTable().catch((error: unknown) => {
      this.ensured = undefined;
      throw error;
    });
    return this.ensured;
  }
}
