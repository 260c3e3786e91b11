// A test double of the Kubernetes client's Watch that the bridge's informers open their connections
// with (BridgeOptions.watchFor): it opens real watches against the real API server, and lets a test do
// to them what the network or the API server would: drop them, hold them closed, and resume from a
// resource version the API server has forgotten (410 Gone, as after etcd compaction).
import { KubeConfig, Watch } from '@kubernetes/client-node';
import type { WatchedKind } from '../../shared/events/cloud-event.js';

type WatchCallback = (phase: string, apiObj: unknown, watchObj?: unknown) => void;
type DoneCallback = (err: unknown) => void;

/** Closing a held connection is a normal end for the informer, which reconnects (and waits). */
const holdReason = new Error('watch held closed by the test');

export class ControllableWatch extends Watch {
  readonly #live = new Set<AbortController>();
  #gate: Promise<void> | undefined;
  #openGate: (() => void) | undefined;
  #expireNext = false;

  override async watch(
    path: string,
    queryParams: Record<string, string | number | boolean | undefined>,
    callback: WatchCallback,
    done: DoneCallback,
  ): Promise<AbortController> {
    if (this.#gate !== undefined) await this.#gate;
    if (this.#expireNext) {
      // Resource version 1 is older than anything the API server still remembers: it answers 410 Gone,
      // exactly as after etcd compaction, and ListWatch has to relist.
      this.#expireNext = false;
      queryParams = { ...queryParams, resourceVersion: '1' };
    }
    // Watch.watch() hands the controller back only once connected, but may call done before that.
    const connection: { controller?: AbortController; finished: boolean } = { finished: false };
    const controllerDone: DoneCallback = (err) => {
      connection.finished = true;
      const controller = connection.controller;
      if (controller !== undefined) this.#live.delete(controller);
      const held = controller?.signal.aborted === true && controller.signal.reason === holdReason;
      done(held ? null : err);
    };
    const controller = await super.watch(path, queryParams, callback, controllerDone);
    connection.controller = controller;
    if (!connection.finished) this.#live.add(controller);
    return controller;
  }

  /** Drops every live connection as a network failure would (the informer sees an error). */
  drop(): number {
    const live = [...this.#live];
    for (const controller of live) controller.abort(new Error('watch connection dropped by the test'));
    return live.length;
  }

  /** Closes the live connections and holds new ones until release(). */
  hold(): void {
    this.#gate ??= new Promise((resolve) => (this.#openGate = resolve));
    for (const controller of [...this.#live]) controller.abort(holdReason);
  }

  /** Lets held connections open; with `expired`, the next one asks for a forgotten resource version. */
  release(options: { expired?: boolean } = {}): void {
    if (options.expired === true) this.#expireNext = true;
    const open = this.#openGate;
    this.#gate = undefined;
    this.#openGate = undefined;
    open?.();
  }
}

/** One ControllableWatch per kind, made as the bridge asks for them. */
export class ControllableWatches {
  readonly #byKind = new Map<WatchedKind, ControllableWatch>();

  readonly watchFor = (kind: WatchedKind, kubeConfig: KubeConfig): Watch => {
    const watch = new ControllableWatch(kubeConfig);
    this.#byKind.set(kind, watch);
    return watch;
  };

  of(kind: WatchedKind): ControllableWatch {
    const watch = this.#byKind.get(kind);
    if (!watch) throw new Error(`the bridge opened no ${kind} watch`);
    return watch;
  }

  all(): ControllableWatch[] {
    return [...this.#byKind.values()];
  }
}
