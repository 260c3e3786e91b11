// Azure's placement scores for the region's zones: how likely a VM of a size is to be allocated in each
// zone now, for spot VMs (Compute's placementScores/spot/generate) and for regular ones
// (placementScores/regular/generate, generally available but enabled only for subscriptions Microsoft
// approved). Scores are estimates that Azure itself keeps for about a minute, so each size's are cached
// for a TTL and a burst of launches shares one request; Azure takes at most five sizes a request. A
// request that fails (throttled, a server error) scores nothing for its sizes until the TTL passes, and
// one Azure refuses (the regular API not enabled for the subscription, the action not granted) stops
// that kind of score for an hour: launches then choose as they did before scores existed, and the
// failure memory stays the ground truth either way.
import type { ComputeManagementClient } from '@azure/arm-compute';
import { createDefaultHttpClient, createPipelineRequest, type HttpClient } from '@azure/core-rest-pipeline';

const SCORES = ['High', 'Medium', 'Low', 'RestrictedSKU', 'DataNotFoundOrStale'] as const;
export type PlacementScore = (typeof SCORES)[number];
const isPlacementScore = (value: string): value is PlacementScore =>
  (SCORES as readonly string[]).includes(value);

/** Spot scores for spot VMs, regular scores for on-demand ones. */
export type ScoredPriority = 'spot' | 'regular';

/** Which kind of score an offering of `capacityType` takes; none for reserved capacity. */
export function scoredPriorityOf(capacityType: string): ScoredPriority | undefined {
  return capacityType === 'spot' ? 'spot' : capacityType === 'on-demand' ? 'regular' : undefined;
}

const API_VERSIONS: Record<ScoredPriority, string> = { spot: '2025-06-05', regular: '2026-10-05-preview' };
/** A refused kind of score is not asked for again for this long. */
const REFUSED_PAUSE_MS = 60 * 60_000;
/** A launch waits no longer than this for scores (the Azure provider's recommender call waits 5 s too). */
const REQUEST_TIMEOUT_MS = 5_000;
/** The most sizes one request may name. */
export const MAX_SIZES_PER_REQUEST = 5;

/** Scores by `scoreKey(priority, vmSize, zoneNumber)`. */
export type PlacementScores = ReadonlyMap<string, PlacementScore>;

export const scoreKey = (priority: ScoredPriority, vmSize: string, zoneNumber: string): string =>
  `${sizeKey(priority, vmSize)}|${zoneNumber}`;

/** A size's entry in the cache: its zones' scores of one kind. */
const sizeKey = (priority: ScoredPriority, vmSize: string): string => `${priority}|${vmSize.toLowerCase()}`;

interface ScoreResponse {
  placementScores?: { sku?: string; availabilityZone?: string; score?: string }[];
}

interface SizeEntry {
  /** The zones' scores, or none when the request for it failed. */
  byZone: ReadonlyMap<string, PlacementScore> | undefined;
  at: number;
}

export class PlacementScoresReader {
  /** By sizeKey. */
  private readonly bySize = new Map<string, SizeEntry>();
  private readonly pending = new Map<string, Promise<void>>();
  private readonly refusedUntil: Record<ScoredPriority, number> = { spot: -Infinity, regular: -Infinity };
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
      onError?: (error: unknown, priority: ScoredPriority, vmSizes: readonly string[]) => void;
    },
  ) {}

  /** How many score requests were sent, for the bench's request figures. */
  get requestCount(): number {
    return this.requests;
  }

  /**
   * The zones' scores of each of `vmSizes` for `priority`, from the cache or one request per five sizes;
   * none while Azure refuses that kind of score.
   */
  async scores(priority: ScoredPriority, vmSizes: readonly string[]): Promise<PlacementScores> {
    const now = this.now();
    if (now < this.refusedUntil[priority]) return new Map();
    const keyOf = (size: string) => sizeKey(priority, size);
    const wanted = [...new Set(vmSizes.map((s) => s.toLowerCase()))];
    const stale = wanted.filter((size) => {
      const entry = this.bySize.get(keyOf(size));
      return (!entry || now - entry.at >= this.options.ttlMs) && !this.pending.has(keyOf(size));
    });
    for (let i = 0; i < stale.length; i += MAX_SIZES_PER_REQUEST) {
      const batch = stale.slice(i, i + MAX_SIZES_PER_REQUEST);
      const request = this.fetch(priority, batch).finally(() => {
        for (const size of batch) this.pending.delete(keyOf(size));
      });
      for (const size of batch) this.pending.set(keyOf(size), request);
    }
    await Promise.all(wanted.map((size) => this.pending.get(keyOf(size))));
    const scores = new Map<string, PlacementScore>();
    for (const size of wanted) {
      for (const [zone, score] of this.bySize.get(keyOf(size))?.byZone ?? [])
        scores.set(scoreKey(priority, size, zone), score);
    }
    return scores;
  }

  private now(): number {
    return (this.options.now ?? Date.now)();
  }

  private async fetch(priority: ScoredPriority, vmSizes: readonly string[]): Promise<void> {
    const { endpoint, subscriptionId, location } = this.options;
    const at = this.now();
    this.requests++;
    try {
      const url =
        `${endpoint.replace(/\/+$/, '')}/subscriptions/${encodeURIComponent(subscriptionId)}` +
        `/providers/Microsoft.Compute/locations/${encodeURIComponent(location)}/placementScores/${priority}/generate` +
        `?api-version=${API_VERSIONS[priority]}`;
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
      // A launch does not wait long for a hint (its client is built without retries, too).
      request.abortSignal = AbortSignal.timeout(REQUEST_TIMEOUT_MS);
      const response = await this.client.pipeline.sendRequest(this.http, request);
      if (response.status !== 200) {
        // Refused for good (not enabled for the subscription, not granted, not served): not asked again
        // for a while, instead of once per TTL and size.
        if ([400, 401, 403, 404].includes(response.status))
          this.refusedUntil[priority] = at + REFUSED_PAUSE_MS;
        throw new Error(
          `${priority} placement scores answered ${response.status}: ${(response.bodyAsText ?? '').slice(0, 300)}`,
        );
      }
      const body = JSON.parse(response.bodyAsText ?? '{}') as ScoreResponse;
      const bySize = new Map<string, Map<string, PlacementScore>>(
        vmSizes.map((s) => [sizeKey(priority, s), new Map()]),
      );
      for (const entry of body.placementScores ?? []) {
        const size = entry.sku?.toLowerCase();
        const zone = entry.availabilityZone;
        if (!size || !zone || !entry.score || !isPlacementScore(entry.score)) continue;
        bySize.get(sizeKey(priority, size))?.set(zone, entry.score);
      }
      for (const [key, byZone] of bySize) this.bySize.set(key, { byZone, at });
    } catch (error) {
      this.options.onError?.(error, priority, vmSizes);
      for (const size of vmSizes) this.bySize.set(sizeKey(priority, size), { byZone: undefined, at });
    }
  }
}
