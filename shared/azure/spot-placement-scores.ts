// Azure's Spot Placement Scores for the region's zones (Compute's placementScores/spot/generate): how
// likely a spot VM of a size is to be allocated in each zone now. Scores are estimates that Azure itself
// keeps for about a minute, so each size's are cached for a TTL and a burst of launches shares one
// request; Azure takes at most five sizes a request. A request that fails (throttled, refused, a server
// error) scores nothing for its sizes until the TTL passes: launches then choose as they did before
// scores existed, and the failure memory stays the ground truth either way.
import type { ComputeManagementClient } from '@azure/arm-compute';
import { createDefaultHttpClient, createPipelineRequest, type HttpClient } from '@azure/core-rest-pipeline';

export type PlacementScore = 'High' | 'Medium' | 'Low' | 'RestrictedSKU' | 'DataNotFoundOrStale';

export const SPOT_PLACEMENT_SCORES_API_VERSION = '2025-06-05';
/** A launch waits no longer than this for scores (the Azure provider's recommender call waits 5 s too). */
const REQUEST_TIMEOUT_MS = 5_000;
/** The most sizes one request may name. */
export const MAX_SIZES_PER_REQUEST = 5;

/** Scores by `scoreKey(vmSize, zoneNumber)`. */
export type PlacementScores = ReadonlyMap<string, PlacementScore>;

export const scoreKey = (vmSize: string, zoneNumber: string): string =>
  `${vmSize.toLowerCase()}|${zoneNumber}`;

interface ScoreResponse {
  placementScores?: { sku?: string; availabilityZone?: string; score?: string }[];
}

const SCORES = new Set<string>(['High', 'Medium', 'Low', 'RestrictedSKU', 'DataNotFoundOrStale']);

interface SizeEntry {
  /** The zones' scores, or none when the request for it failed. */
  byZone: ReadonlyMap<string, PlacementScore> | undefined;
  at: number;
}

export class SpotPlacementScores {
  private readonly bySize = new Map<string, SizeEntry>();
  private readonly pending = new Map<string, Promise<void>>();
  private readonly http: HttpClient = createDefaultHttpClient();
  private requests = 0;

  constructor(
    private readonly client: ComputeManagementClient,
    private readonly options: {
      endpoint: string;
      subscriptionId: string;
      location: string;
      ttlMs: number;
      now?: () => number;
      onError?: (error: unknown, vmSizes: readonly string[]) => void;
    },
  ) {}

  /** How many score requests were sent, for the bench's request figures. */
  get requestCount(): number {
    return this.requests;
  }

  /** The zones' scores of each of `vmSizes` (spot), from the cache or one request per five sizes. */
  async scores(vmSizes: readonly string[]): Promise<PlacementScores> {
    const now = this.now();
    const wanted = [...new Set(vmSizes.map((s) => s.toLowerCase()))];
    const stale = wanted.filter((size) => {
      const entry = this.bySize.get(size);
      return (!entry || now - entry.at >= this.options.ttlMs) && !this.pending.has(size);
    });
    for (let i = 0; i < stale.length; i += MAX_SIZES_PER_REQUEST) {
      const batch = stale.slice(i, i + MAX_SIZES_PER_REQUEST);
      const request = this.fetch(batch).finally(() => {
        for (const size of batch) this.pending.delete(size);
      });
      for (const size of batch) this.pending.set(size, request);
    }
    await Promise.all(wanted.map((size) => this.pending.get(size)));
    const scores = new Map<string, PlacementScore>();
    for (const size of wanted) {
      for (const [zone, score] of this.bySize.get(size)?.byZone ?? [])
        scores.set(scoreKey(size, zone), score);
    }
    return scores;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private async fetch(vmSizes: readonly string[]): Promise<void> {
    const { endpoint, subscriptionId, location } = this.options;
    const at = this.now();
    this.requests++;
    try {
      const url =
        `${endpoint.replace(/\/+$/, '')}/subscriptions/${encodeURIComponent(subscriptionId)}` +
        `/providers/Microsoft.Compute/locations/${encodeURIComponent(location)}/placementScores/spot/generate` +
        `?api-version=${SPOT_PLACEMENT_SCORES_API_VERSION}`;
      const request = createPipelineRequest({
        url,
        method: 'POST',
        headers: undefined,
        body: JSON.stringify({
          desiredLocations: [location],
          desiredSizes: vmSizes.map((sku) => ({ sku })),
          desiredCount: 1,
          availabilityZones: true,
        }),
      });
      request.headers.set('content-type', 'application/json');
      // Throttled, the pipeline would retry after Retry-After: a launch does not wait that long for a hint.
      request.abortSignal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
      const response = await this.client.pipeline.sendRequest(this.http, request);
      if (response.status !== 200) {
        throw new Error(
          `placement scores answered ${response.status}: ${(response.bodyAsText ?? '').slice(0, 300)}`,
        );
      }
      const body = JSON.parse(response.bodyAsText ?? '{}') as ScoreResponse;
      const bySize = new Map<string, Map<string, PlacementScore>>(vmSizes.map((s) => [s, new Map()]));
      for (const entry of body.placementScores ?? []) {
        const size = entry.sku?.toLowerCase();
        const zone = entry.availabilityZone;
        if (!size || !zone || !entry.score || !SCORES.has(entry.score)) continue;
        bySize.get(size)?.set(zone, entry.score as PlacementScore);
      }
      for (const [size, byZone] of bySize) this.bySize.set(size, { byZone, at });
    } catch (error) {
      this.options.onError?.(error, vmSizes);
      for (const size of vmSizes) this.bySize.set(size, { byZone: undefined, at });
    }
  }
}
