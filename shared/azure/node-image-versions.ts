// Versions of AKS node image definitions in the public community galleries, listed per definition and
// cached for a TTL (AKS publishes a new version about weekly; every launch needs the newest).
import type { ComputeManagementClient } from '@azure/arm-compute';
import { isRestError } from '@azure/core-rest-pipeline';
import type { GalleryImageVersion } from '../cloudprovider/azure/decisions/node-image.js';

export class NodeImageVersions {
  private readonly cached = new Map<string, { versions: GalleryImageVersion[]; fetchedAt: number }>();
  private readonly inFlight = new Map<string, Promise<GalleryImageVersion[]>>();

  constructor(
    private readonly client: ComputeManagementClient,
    private readonly location: string,
    private readonly ttlMs: number,
    private readonly now: () => number = Date.now,
  ) {}

  /** The published versions of one image definition; [] when the gallery has no such definition. */
  async list(gallery: string, definition: string): Promise<GalleryImageVersion[]> {
    const key = `${gallery}/${definition}`.toLowerCase();
    const hit = this.cached.get(key);
    if (hit && this.now() - hit.fetchedAt < this.ttlMs) return hit.versions;
    let pending = this.inFlight.get(key);
    if (!pending) {
      pending = this.fetch(key, gallery, definition).finally(() => this.inFlight.delete(key));
      this.inFlight.set(key, pending);
    }
    return pending;
  }

  private async fetch(key: string, gallery: string, definition: string): Promise<GalleryImageVersion[]> {
    const versions: GalleryImageVersion[] = [];
    try {
      const pages = this.client.communityGalleryImageVersions.list(this.location, gallery, definition);
      for await (const version of pages) {
        if (!version.name || version.excludeFromLatest) continue;
        versions.push({
          name: version.name,
          ...(version.publishedDate ? { publishedDate: version.publishedDate } : {}),
        });
      }
    } catch (error) {
      if (!(isRestError(error) && error.statusCode === 404)) throw error;
    }
    this.cached.set(key, { versions, fetchedAt: this.now() });
    return versions;
  }
}
