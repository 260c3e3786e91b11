// One supervised informer per watched kind: @kubernetes/client-node's ListWatch does the list + watch
// and keeps a cache; this wrapper adds what the bridge needs around it.
//
// - Watch expiry (410 Gone): ListWatch relists by itself and reports the difference as add/update/delete.
// - Errors (API server restart, dropped connection, failed list): ListWatch stops and reports an error;
//   the supervisor restarts it with exponential backoff, resuming from the last resource version.
// - Backpressure: pause() closes the watch connection and holds the next one until resume(); the watch
//   then resumes from the last resource version it delivered, so nothing is lost while paused.
// - Sync: the first time ListWatch opens a watch, its initial list has been delivered.
import type { KubeConfig, KubernetesListObject, KubernetesObject } from '@kubernetes/client-node';
import { ListWatch, Watch } from '@kubernetes/client-node';
import type { WatchedKind } from '../shared/events/cloud-event.js';
import type { Logger } from '../shared/observability/logger.js';
import type { BackoffPolicy } from './backoff.js';
import { backoffDelay } from './backoff.js';
import type { WatchedObjects } from './projection.js';
import { projectors } from './projection.js';
import type { InformerVerb } from './relevance.js';
import type { ListPage as SharedListPage } from '../shared/kube/paging.js';

/**
 * What the informer cache holds: the slim projection, whose own metadata is the metadata ListWatch reads.
 * ListWatch files its cache by namespace and then name and tells updates by resource version, so a
 * namespaced kind's projection keeps its namespace (PodView does): without it, pods named alike in two
 * namespaces (StatefulSet pods) would share one entry, and deleting one would drop the other.
 */
export interface Cached<K extends WatchedKind> extends KubernetesObject {
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string };
  view: WatchedObjects[K];
}

/** One page of a relist: shared/kube/paging.ts's, with items the bridge checks itself. */
export type ListPage = SharedListPage<unknown>;

export interface WatchedResource<K extends WatchedKind> {
  kind: K;
  /** Collection path, e.g. `/apis/karpenter.sh/v1/nodeclaims`. */
  path: string;
  /** Server-side filter of both the list and the watch, e.g. `spec.nodeName=`. */
  fieldSelector?: string;
  /** One page of the collection (raw JSON or client models). */
  listPage: (continueToken: string | undefined) => Promise<ListPage>;
}

export interface WatcherOptions<K extends WatchedKind> {
  kubeConfig: KubeConfig;
  resource: WatchedResource<K>;
  onNotification: (verb: InformerVerb, object: WatchedObjects[K], initialList: boolean) => void;
  backoff: BackoffPolicy;
  logger: Logger;
  random?: () => number;
  /**
   * The Watch that opens the connections (default: the client's own). Tests pass a double that can
   * drop or hold connections, as a network failure, an API-server restart or etcd compaction would.
   */
  watch?: Watch;
}

export interface WatcherStats {
  synced: boolean;
  connected: boolean;
  restarts: number;
  /** Completed lists: the initial one plus one per relist (after 410 Gone). */
  lists: number;
  lastError: string | undefined;
  cached: number;
}

type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
type DoneCallback = (err: unknown) => void;

/** Marks an abort the watcher made on purpose, so ListWatch sees a normal close and reconnects. */
const pauseReason = new Error('watch paused for backpressure');

/**
 * A Watch that projects objects before ListWatch caches them, knows its live connections (so they can
 * be paused for backpressure), and holds new connections while paused. The connections themselves are
 * opened by `inner`.
 */
class SupervisedWatch extends Watch {
  readonly #live = new Set<AbortController>();
  #gate: Promise<void> | undefined;
  #openGate: (() => void) | undefined;
  #closed = false;

  constructor(
    config: KubeConfig,
    private readonly inner: Watch,
    private readonly project: (raw: unknown) => unknown,
    private readonly hooks: {
      onFirstWatch: () => void;
      onEvent: () => void;
      onConnected: (live: boolean) => void;
    },
  ) {
    super(config);
  }

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: DoneCallback,
  ): Promise<AbortController> {
    this.hooks.onFirstWatch();
    if (this.#gate !== undefined) await this.#gate;
    if (this.#closed) {
      const idle = new AbortController();
      idle.abort();
      return idle;
    }
    // Watch.watch() hands the controller back only once connected, but may call done before that.
    const connection: { controller?: AbortController; finished: boolean } = { finished: false };
    const wrappedDone: DoneCallback = (err) => {
      connection.finished = true;
      const controller = connection.controller;
      if (controller !== undefined) this.#live.delete(controller);
      this.hooks.onConnected(this.#live.size > 0);
      const paused = controller?.signal.aborted === true && controller.signal.reason === pauseReason;
      done(paused ? null : err);
    };
    const wrappedCallback: WatchCallback = (phase, apiObj, watchObj) => {
      this.hooks.onEvent();
      const projected =
        phase === 'ADDED' || phase === 'MODIFIED' || phase === 'DELETED' ? this.project(apiObj) : apiObj;
      callback(phase, projected, watchObj);
    };
    const controller = await this.inner.watch(path, queryParams, wrappedCallback, wrappedDone);
    connection.controller = controller;
    if (!connection.finished) {
      this.#live.add(controller);
      this.hooks.onConnected(true);
      // Paused while this connection was being opened: pause() could not see it, so close it now.
      if (this.#gate !== undefined) controller.abort(pauseReason);
    }
    return controller;
  }

  pause(): void {
    if (this.#gate !== undefined) return;
    this.#gate = new Promise((resolve) => (this.#openGate = resolve));
    for (const controller of [...this.#live]) controller.abort(pauseReason);
  }

  resume(): void {
    const open = this.#openGate;
    this.#gate = undefined;
    this.#openGate = undefined;
    open?.();
  }

  close(): void {
    this.#closed = true;
    this.resume();
  }

  get paused(): boolean {
    return this.#gate !== undefined;
  }
}

export class ResourceWatcher<K extends WatchedKind> {
  readonly kind: K;
  readonly #options: WatcherOptions<K>;
  readonly #watch: SupervisedWatch;
  readonly #informer: ListWatch<Cached<K>>;
  #synced = false;
  #connected = false;
  #stopped = true;
  #attempt = 0;
  #restarts = 0;
  #lists = 0;
  #restartTimer: NodeJS.Timeout | undefined;
  #lastError: string | undefined;
  /** When the first of the failures not yet followed by a live connection happened. */
  #failingSince: number | undefined;

  constructor(options: WatcherOptions<K>) {
    this.kind = options.resource.kind;
    this.#options = options;
    const project = (raw: unknown): Cached<K> => toCached(options.resource.kind, raw);
    this.#watch = new SupervisedWatch(
      options.kubeConfig,
      options.watch ?? new Watch(options.kubeConfig),
      project,
      {
        onFirstWatch: () => {
          if (!this.#synced) {
            this.#synced = true;
            options.logger.info('informer synced', { kind: this.kind, cached: this.#informer.list().length });
          }
        },
        onEvent: () => {
          this.#attempt = 0;
        },
        onConnected: (live) => {
          this.#connected = live;
          if (live && this.#failingSince !== undefined) {
            // Said at info so an outage's end is as visible as its start ('watch failed; restarting').
            options.logger.info('watch restored', {
              kind: this.kind,
              downMs: Date.now() - this.#failingSince,
              restarts: this.#restarts,
            });
            this.#failingSince = undefined;
          }
        },
      },
    );
    this.#informer = new ListWatch<Cached<K>>(
      options.resource.path,
      this.#watch,
      () => this.#list(),
      false,
      undefined,
      options.resource.fieldSelector,
    );
    this.#informer.on('add', (object) => this.#notify('add', object));
    this.#informer.on('update', (object) => this.#notify('update', object));
    this.#informer.on('delete', (object) => this.#notify('delete', object));
    this.#informer.on('error', (error: unknown) => this.#restartLater(error));
  }

  start(): void {
    if (!this.#stopped) return;
    this.#stopped = false;
    this.#run();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    clearTimeout(this.#restartTimer);
    this.#watch.close();
    await this.#informer.stop();
  }

  pause(): void {
    this.#watch.pause();
  }

  resume(): void {
    this.#watch.resume();
  }

  get paused(): boolean {
    return this.#watch.paused;
  }

  get synced(): boolean {
    return this.#synced;
  }

  /** The cached objects, for the periodic resync. */
  objects(): WatchedObjects[K][] {
    return this.#informer.list().map((cached) => cached.view);
  }

  stats(): WatcherStats {
    return {
      synced: this.#synced,
      connected: this.#connected,
      restarts: this.#restarts,
      lists: this.#lists,
      lastError: this.#lastError,
      cached: this.#informer.list().length,
    };
  }

  #run(): void {
    this.#informer.start().catch((error: unknown) => this.#restartLater(error));
  }

  #notify(verb: InformerVerb, object: Cached<K>): void {
    if (this.#stopped) return;
    this.#options.onNotification(verb, object.view, !this.#synced);
  }

  #restartLater(error: unknown): void {
    if (this.#stopped || this.#restartTimer !== undefined) return;
    this.#attempt += 1;
    this.#restarts += 1;
    this.#failingSince ??= Date.now();
    this.#lastError = describe(error);
    const delayMs = backoffDelay(this.#attempt, this.#options.backoff, this.#options.random);
    this.#options.logger.warn('watch failed; restarting', {
      kind: this.kind,
      error: this.#lastError,
      attempt: this.#attempt,
      retryInMs: delayMs,
    });
    this.#restartTimer = setTimeout(() => {
      this.#restartTimer = undefined;
      if (!this.#stopped) this.#run();
    }, delayMs);
  }

  async #list(): Promise<KubernetesListObject<Cached<K>>> {
    const items: Cached<K>[] = [];
    let continueToken: string | undefined;
    let resourceVersion: string | undefined;
    do {
      const page = await this.#options.resource.listPage(continueToken);
      // The first page's resource version is the snapshot's; later pages belong to the same snapshot.
      resourceVersion ??= page.resourceVersion;
      for (const raw of page.items) items.push(toCached(this.kind, raw));
      continueToken = page.continueToken || undefined;
    } while (continueToken !== undefined);
    this.#attempt = 0;
    this.#lists += 1;
    return { apiVersion: 'v1', kind: 'List', metadata: { resourceVersion: resourceVersion ?? '' }, items };
  }
}

/** The projection, with its metadata shared (not copied) as the cache's keys: one object less per pod. */
function toCached<K extends WatchedKind>(kind: K, raw: unknown): Cached<K> {
  const view = projectors[kind](raw) as WatchedObjects[K];
  return { metadata: view.metadata, view };
}

function describe(error: unknown): string {
  if (error instanceof Error) {
    const status = (error as { statusCode?: unknown }).statusCode ?? (error as { code?: unknown }).code;
    return status === undefined
      ? `${error.name}: ${error.message}`
      : `${error.name}: ${error.message} (${String(status)})`;
  }
  return String(error);
}
