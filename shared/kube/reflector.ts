// A cache of one kind kept current by a watch, so that reading the kind costs what changed since the
// last read instead of a full list. It lists once (paginated), then watches from the list's
// resourceVersion; every event replaces or removes one cached object. Watches end (server timeout, a
// dropped connection, the API server restarting): the next one resumes from the last resourceVersion
// seen. Only when the server no longer remembers that version (410 Gone, after etcd compaction) or when
// the periodic safety-net resync is due does it list everything again.
//
// Objects are projected before they are cached: a Node as a kubelet writes it is about 19 KB of JSON
// (images, managedFields), of which the lifecycle reads perhaps 1 KB.
//
// A list and a watch never run at once. A relist replaces the cache with what the list saw; a watch still
// running beside it (the old one, or one reopened from the old resourceVersion when the relist aborted
// it) would apply events the list already covers, or events after it that the clear then wipes, and go on
// from a resourceVersion past them: a deletion made during the list was lost until the next resync, and
// the sweep restarted the deleted NodeClaim's termination every few seconds for 12 minutes at 1,000
// nodes. So each list starts a generation: the watches of an older one are aborted, their late events
// dropped, and the next watch opens from the list's own resourceVersion, as client-go's reflector does.
import { Watch, type KubeConfig } from '@kubernetes/client-node';
import { statusCodeOf } from './errors.js';
import { listAllPages, LIST_PAGE_SIZE, type ListPage } from './paging.js';
import { compareResourceVersions } from './resource-versions.js';

export interface ReflectorSource<Raw> {
  /** Collection path for the watch, e.g. `/api/v1/nodes`. */
  path: string;
  /** One page of the collection; the reflector follows continue tokens. */
  listPage(continueToken: string | undefined, limit: number): Promise<ListPage<Raw>>;
  /** The client configuration the watch connects with (called for every connection). */
  kubeConfig(): Promise<KubeConfig>;
}

export interface ReflectorOptions<Raw, Cached> {
  name: string;
  source: ReflectorSource<Raw>;
  /** The slim form kept in the cache. */
  project(raw: Raw): Cached;
  keyOf(raw: Raw): string;
  pageSize?: number;
  /** A full relist even when the watch is healthy: the safety net against a watch that missed something. */
  resyncIntervalMs?: number;
  /**
   * Server-side watch timeout; the watch is reopened from the last resourceVersion after it. Under the
   * client's 30 s inactivity limit, so a quiet watch ends cleanly instead of being aborted.
   */
  watchTimeoutSeconds?: number;
  now?: () => number;
  onError?: (error: unknown) => void;
  /**
   * Called for every change a watch event makes to the cache, with the cached form before and after
   * (undefined for an added or a removed object). A relist replaces the cache without calling it: a list
   * says what is, not what happened.
   */
  onChange?: (previous: Cached | undefined, next: Cached | undefined) => void;
}

/**
 * Why a fresh read did not come from the cache: its watch delivered nothing for the quiet time (nothing
 * of the kind is changing, so no event would carry it to the version), it did not get there within the
 * wait, or the versions do not compare (not etcd's integers). `uncached` is a reader that keeps no cache.
 */
export type FreshMiss = 'quiet' | 'late' | 'incomparable' | 'uncached';

export type FreshItems<Cached> = { items: Cached[] } | { missed: FreshMiss };

export interface ReflectorStats {
  /** Full lists made: the first, then one per 410 Gone or due resync. */
  lists: number;
  /** Watch connections opened. */
  watches: number;
  /** Watch events applied to the cache (bookmarks excluded). */
  events: number;
  cached: number;
}

interface WatchEvent {
  type?: string;
  object?: { metadata?: { resourceVersion?: string }; code?: number };
}

const DEFAULT_RESYNC_MS = 30 * 60_000;
const DEFAULT_WATCH_TIMEOUT_SECONDS = 25;
const RETRY_DELAY_MS = 1_000;
const MAX_RETRY_DELAY_MS = 30_000;

export class Reflector<Raw, Cached> {
  private readonly objects = new Map<string, Cached>();
  private resourceVersion: string | undefined;
  private lastListAt = 0;
  private watchController: AbortController | undefined;
  private watching: Promise<void> | undefined;
  /** Bumped by every list: a watch opened under an older generation no longer touches the cache. */
  private generation = 0;
  private relisting: Promise<void> | undefined;
  /** When the watch last delivered an event or a bookmark (performance.now()). */
  private lastEventAt = Number.NEGATIVE_INFINITY;
  /** Callers of itemsAsOf waiting for the cache to reach a version; told after each version it reaches. */
  private readonly versionWaiters = new Set<() => void>();
  private stopped = false;
  private retryDelayMs = 0;
  private retryTimer: ReturnType<typeof setTimeout> | undefined;
  readonly stats: ReflectorStats = { lists: 0, watches: 0, events: 0, cached: 0 };

  constructor(private readonly options: ReflectorOptions<Raw, Cached>) {}

  /**
   * The cached objects, current as of the watch. The first call lists (and opens the watch); later
   * calls return at once unless the watch was lost to 410 Gone or the resync interval passed, in
   * which case this call relists first.
   */
  async items(): Promise<Cached[]> {
    if (this.stopped) throw new Error(`reflector ${this.options.name} is stopped`);
    const now = (this.options.now ?? Date.now)();
    const resyncMs = this.options.resyncIntervalMs ?? DEFAULT_RESYNC_MS;
    if (this.resourceVersion === undefined || now - this.lastListAt >= resyncMs) {
      // Concurrent reads that find a list due share one.
      this.relisting ??= this.relist().finally(() => {
        this.relisting = undefined;
      });
      await this.relisting;
    }
    this.ensureWatching();
    return [...this.objects.values()];
  }

  /**
   * The cached objects once the cache has seen every change up to `resourceVersion` (a consistent
   * list's, read after the writes the caller must see), as the API server serves a consistent read from
   * its own watch cache. The cache gets there with the first event (or bookmark) past that version, so
   * this waits only while events of this kind keep coming, and otherwise says why it did not get there
   * (FreshMiss); the caller then lists instead.
   *
   * "Quiet" is judged after the process has read what is waiting on its sockets: a process busy for
   * longer than `quietMs` (a sweep's computation at 1,000 nodes) would otherwise find every watch quiet,
   * its events still unread, and list what its caches were about to have.
   */
  async itemsAsOf(resourceVersion: string, waitMs: number, quietMs = waitMs): Promise<FreshItems<Cached>> {
    const items = await this.items();
    const seen = (): boolean | 'incomparable' => {
      const order = this.resourceVersion
        ? compareResourceVersions(this.resourceVersion, resourceVersion)
        : -1;
      return order === undefined ? 'incomparable' : order >= 0;
    };
    const now = seen();
    if (now === 'incomparable') return { missed: 'incomparable' };
    if (now) return { items };
    const outcome = await new Promise<true | FreshMiss>((resolve) => {
      let settled = false;
      const finish = (result: true | FreshMiss) => {
        if (settled) return;
        settled = true;
        clearTimeout(cap);
        clearTimeout(quiet);
        this.versionWaiters.delete(waiter);
        resolve(result);
      };
      const cap = setTimeout(() => finish('late'), waitMs);
      let quiet: ReturnType<typeof setTimeout> | undefined;
      // Armed for the rest of quietMs since the last event; when it fires, what the sockets hold is read
      // first (setImmediate runs after the event loop's I/O), and only a watch still silent is quiet.
      const armQuiet = () => {
        clearTimeout(quiet);
        const left = quietMs - (performance.now() - this.lastEventAt);
        quiet = setTimeout(
          () =>
            setImmediate(() => {
              if (settled) return;
              if (performance.now() - this.lastEventAt >= quietMs) finish('quiet');
              else armQuiet();
            }),
          Math.max(0, left),
        );
      };
      const waiter = () => {
        const state = seen();
        if (state !== false) finish(state === true ? true : 'incomparable');
        else armQuiet();
      };
      this.versionWaiters.add(waiter);
      armQuiet();
    });
    return outcome === true ? { items: [...this.objects.values()] } : { missed: outcome };
  }

  stop(): void {
    this.stopped = true;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.watchController?.abort();
  }

  private async relist(): Promise<void> {
    this.generation += 1;
    this.watchController?.abort();
    this.watchController = undefined;
    this.watching = undefined;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = undefined;
    const { keyOf, project } = this.options;
    const { items, resourceVersion } = await listAllPages(
      (token, limit) => this.options.source.listPage(token, limit),
      (raw): [string, Cached] => [keyOf(raw), project(raw)],
      this.options.pageSize ?? LIST_PAGE_SIZE,
    );
    this.objects.clear();
    for (const [key, value] of items) this.objects.set(key, value);
    this.resourceVersion = resourceVersion ?? '';
    this.lastListAt = (this.options.now ?? Date.now)();
    this.stats.lists += 1;
    this.stats.cached = this.objects.size;
    this.tellVersionWaiters();
  }

  private ensureWatching(): void {
    if (this.watching || this.stopped || this.retryTimer || this.relisting) return;
    const generation = this.generation;
    const watching = this.watchOnce(generation).finally(() => {
      if (this.watching === watching) this.watching = undefined;
    });
    this.watching = watching;
  }

  private async watchOnce(generation: number): Promise<void> {
    const current = () => generation === this.generation && !this.stopped;
    let config: KubeConfig;
    try {
      config = await this.options.source.kubeConfig();
    } catch (error) {
      if (current()) this.scheduleRewatch(error);
      return;
    }
    const watch = new Watch(config);
    const ended = new Promise<unknown>((resolve) => {
      void watch
        .watch(
          this.options.source.path,
          {
            resourceVersion: this.resourceVersion,
            allowWatchBookmarks: true,
            timeoutSeconds: this.options.watchTimeoutSeconds ?? DEFAULT_WATCH_TIMEOUT_SECONDS,
          },
          (type, object) => {
            if (current()) this.apply({ type, object } as WatchEvent, object as Raw);
          },
          (error) => resolve(error),
        )
        .then((controller) => {
          if (current()) this.watchController = controller;
          else controller.abort();
        });
    });
    this.stats.watches += 1;
    const error = await ended;
    if (!current()) return; // a list superseded this watch (or the reflector stopped)
    this.watchController = undefined;
    if (error && statusCodeOf(error) === 410) this.resourceVersion = undefined;
    if (this.resourceVersion === undefined) return; // the next items() relists
    this.scheduleRewatch(error);
  }

  private scheduleRewatch(error: unknown): void {
    const name = (error as { name?: string } | null)?.name;
    if (error && name !== 'AbortError' && name !== 'TimeoutError') {
      this.options.onError?.(error);
      this.retryDelayMs = Math.min(Math.max(this.retryDelayMs * 2, RETRY_DELAY_MS), MAX_RETRY_DELAY_MS);
    } else this.retryDelayMs = 0;
    this.retryTimer = setTimeout(() => {
      this.retryTimer = undefined;
      this.ensureWatching();
    }, this.retryDelayMs);
    this.retryTimer.unref();
  }

  private apply(event: WatchEvent, raw: Raw): void {
    const version = event.object?.metadata?.resourceVersion;
    switch (event.type) {
      case 'ADDED':
      case 'MODIFIED': {
        const key = this.options.keyOf(raw);
        const next = this.options.project(raw);
        const previous = this.objects.get(key);
        this.objects.set(key, next);
        this.stats.events += 1;
        this.options.onChange?.(previous, next);
        break;
      }
      case 'DELETED': {
        const key = this.options.keyOf(raw);
        const previous = this.objects.get(key);
        this.objects.delete(key);
        this.stats.events += 1;
        this.options.onChange?.(previous ?? this.options.project(raw), undefined);
        break;
      }
      case 'ERROR':
        // The server reports an expired resourceVersion as an ERROR event carrying a 410 Status.
        if (event.object?.code === 410) this.resourceVersion = undefined;
        this.watchController?.abort();
        return;
      default:
        break; // BOOKMARK: only its resourceVersion matters
    }
    if (version) this.resourceVersion = version;
    this.stats.cached = this.objects.size;
    this.lastEventAt = performance.now();
    if (version) this.tellVersionWaiters();
  }

  private tellVersionWaiters(): void {
    for (const waiter of [...this.versionWaiters]) waiter();
  }
}
