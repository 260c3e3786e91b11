// The record of offerings (capacity type / VM size / zone) that recently failed to launch, in a Storage
// table so every function instance shares it and it survives restarts. Expired rows are ignored on read
// and removed opportunistically.
import { TableClient, type TableEntity } from '@azure/data-tables';

export interface UnavailableOffering {
  key: string;
  reason: string;
  message: string;
  expiresAt: Date;
}

interface OfferingRow {
  offeringKey: string;
  reason: string;
  message: string;
  expiresAt: Date;
}

// Row keys may not contain '/', '\', '#' or '?'; offering keys contain '/'.
const rowKeyOf = (key: string): string => encodeURIComponent(key);
const partition = 'offerings';

export class UnavailableOfferingsStore {
  private ensured: Promise<void> | undefined;

  constructor(private readonly table: TableClient) {}

  static fromConnectionString(connectionString: string, tableName: string): UnavailableOfferingsStore {
    return new UnavailableOfferingsStore(
      TableClient.fromConnectionString(connectionString, tableName, { allowInsecureConnection: true }),
    );
  }

  async mark(offering: UnavailableOffering): Promise<void> {
    await this.ensureTable();
    const entity: TableEntity<OfferingRow> = {
      partitionKey: partition,
      rowKey: rowKeyOf(offering.key),
      offeringKey: offering.key,
      reason: offering.reason,
      message: offering.message.slice(0, 4000),
      expiresAt: offering.expiresAt,
    };
    // Upsert-replace: a later failure extends the TTL; concurrent writers converge on one row.
    await this.table.upsertEntity(entity, 'Replace');
  }

  async listActive(now: Date): Promise<UnavailableOffering[]> {
    await this.ensureTable();
    const active: UnavailableOffering[] = [];
    const expired: string[] = [];
    for await (const row of this.table.listEntities<OfferingRow>({
      queryOptions: { filter: `PartitionKey eq '${partition}'` },
    })) {
      const expiresAt = new Date(row.expiresAt);
      if (expiresAt > now) {
        active.push({ key: row.offeringKey, reason: row.reason, message: row.message, expiresAt });
      } else {
        if (row.rowKey) expired.push(row.rowKey);
      }
    }
    await Promise.allSettled(expired.map((rowKey) => this.table.deleteEntity(partition, rowKey)));
    return active;
  }

  private ensureTable(): Promise<void> {
    this.ensured ??= this.table.createTable().catch((error: unknown) => {
      this.ensured = undefined;
      throw error;
    });
    return this.ensured;
  }
}
