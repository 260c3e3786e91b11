// The region's Resource SKUs catalog, listed once and cached for a TTL: the list is large, changes rarely,
// and ARM allows few List calls per minute.
import type { ComputeManagementClient, ResourceSku } from '@azure/arm-compute';

export class ResourceSkuCatalog {
  private cached: { skus: ResourceSku[]; fetchedAt: number } | undefined;
  private inFlight: Promise<ResourceSku[]> | undefined;

  constructor(
    private readonly client: ComputeManagementClient,
    private readonly location: string,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  async list(): Promise<ResourceSku[]> {
    if (this.cached && this.now() - this.cached.fetchedAt < this.ttlMs) return this.cached.skus;
    // Concurrent callers share one listing instead of each paging through the catalog.
    this.inFlight ??= this.fetch().finally(() => {
      this.inFlight = undefined;
    });
    return this.inFlight;
  }

  private async fetch(): Promise<ResourceSku[]> {
    const skus: ResourceSku[] = [];
    for await (const sku of this.client.resourceSkus.list({ filter: `location eq '${this.location}'` })) {
      if (sku.resourceType === 'virtualMachines') skus.push(sku);
    }
    this.cached = { skus, fetchedAt: this.now() };
    return skus;
  }
}
