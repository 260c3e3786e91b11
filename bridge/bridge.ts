// Wires the bridge together: informers → relevance filter → outbox → queue publisher, plus the periodic
// resync, backpressure between the outbox and the watches, the health endpoint and graceful shutdown.
import { randomUUID } from 'node:crypto';
import type { TokenCredential } from '@azure/identity';
import { KubeConfig, type Watch } from '@kubernetes/client-node';
import type { ObjectChange, WatchedKind } from '../shared/events/cloud-event.js';
import { toCloudEvent } from '../shared/events/cloud-event.js';
import type { Logger } from '../shared/observability/logger.js';
import { createLogger } from '../shared/observability/logger.js';
import type { BackoffPolicy } from './backoff.js';
import { defaultBackoff, validateBackoff } from './backoff.js';
import { ChangeBuffer } from './change-buffer.js';
import type { KubernetesTarget, QueueTarget } from './config.js';
import { bridgeDefaults } from './config.js';
import type { HealthServer, Readiness } from './health-server.js';
import { startHealthServer } from './health-server.js';
import type { WatchedObjects } from './projection.js';
import type { PublisherStats } from './publisher.js';
import { QueuePublisher } from './publisher.js';
import type { QueueSink } from './queue-sink.js';
import { createQueueSink } from './queue-sink.js';
import type { InformerVerb, Seen } from './relevance.js';
import { change, decide, isProvisionable, needsWork } from './relevance.js';
import { watchedResources } from './resources.js';
import type { WatcherStats } from './watcher.js';
import { ResourceWatcher } from './watcher.js';

export interface BridgeOptions {
  queue: QueueTarget;
  /** Where the Kubernetes API is: a kubeconfig path, in-cluster, or a ready KubeConfig. */
  kubernetes: KubernetesTarget | { mode: 'kubeConfig'; kubeConfig: KubeConfig };
  /** CloudEvent `source`. */
  source: string;
  /** Port for /healthz and /readyz; 0 picks a free one; undefined starts no HTTP server. */
  healthPort?: number;
  healthHost?: string;
  resyncSeconds?: number;
  podResyncSeconds?: number;
  bufferCapacity?: number;
  sendConcurrency?: number;
  shutdownFlushSeconds?: number;
  /**
   * How often an idle bridge checks the queue (default 15 s with a connection string, 5 min with an
   * identity, where each probe is a message); readiness needs a success within 3 of these.
   */
  queueProbeIntervalMs?: number;
  /** Per-request timeout of queue calls. */
  queueRequestTimeoutMs?: number;
  watchBackoff?: BackoffPolicy;
  queueBackoff?: BackoffPolicy;
  logger?: Logger;
  /** Replaces the Storage queue client; for callers that bring their own transport. */
  queueSink?: QueueSink;
  /** The identity's credential for a serviceUrl queue; DefaultAzureCredential (workload identity) by default. */
  queueCredential?: TokenCredential;
  /** Extra CA to trust for a serviceUrl queue (the local storage front's); unset in Azure. */
  queueCaCertPem?: string;
  /**
   * The Watch each kind's informer opens its connections with (default: the Kubernetes client's own).
   * Tests pass a double that drops or holds connections as the network or the API server would.
   */
  watchFor?: (kind: WatchedKind, kubeConfig: KubeConfig) => Watch;
}

export interface BridgeStats {
  /** Messages the queue accepted. */
  published: number;
  sendFailures: number;
  /** Changes waiting in the outbox (including those being sent). */
  buffered: number;
  /** Changes merged into one already waiting for the same object. */
  coalesced: number;
  /** Whether watches are paused because the outbox is above its capacity. */
  backpressure: boolean;
  backpressureEpisodes: number;
  resyncs: number;
  /** Changes forwarded into the outbox, by change type. */
  forwarded: Record<ObjectChange['changeType'], number>;
  queue: PublisherStats & { reachable: boolean };
  informers: Record<WatchedKind, WatcherStats>;
}

export interface BridgeHandle {
  /** Stops the watches, drains the outbox within the shutdown deadline, closes the HTTP server. */
  stop(): Promise<void>;
  /** Informers synced and the queue reachable recently (the /readyz answer). */
  ready(): boolean;
  stats(): BridgeStats;
  /** The bound health port, when a health server was asked for. */
  healthPort: number | undefined;
  /** Announces every object that still needs work now, as the periodic resync does. Returns how many. */
  resyncNow(): number;
}

const watchedKinds: readonly WatchedKind[] = ['NodeClaim', 'Node', 'NodePool', 'AKSNodeClass', 'Pod'];
const resyncedKinds: readonly ('NodeClaim' | 'Node')[] = ['NodeClaim', 'Node'];

export async function startBridge(options: BridgeOptions): Promise<BridgeHandle> {
  const logger = options.logger ?? createLogger({ component: 'event-bridge' });
  const resyncMs = (options.resyncSeconds ?? bridgeDefaults.resyncSeconds) * 1000;
  const podResyncMs = (options.podResyncSeconds ?? bridgeDefaults.podResyncSeconds) * 1000;
  const capacity = options.bufferCapacity ?? bridgeDefaults.bufferCapacity;
  // Resume reading once the outbox has drained to half, so watches do not flap at the mark.
  const resumeBelow = Math.floor(capacity / 2);
  // With a key the idle probe is a metadata read and costs nothing; with an identity it is a message the
  // functions receive (queue-sink.ts), so an idle bridge probes every 5 minutes there, not every 15 s, and
  // a settled cluster stays near silent. Sends refresh readiness as probes do.
  const probeIntervalMs =
    options.queueProbeIntervalMs ?? (options.queue.mode === 'serviceUrl' ? 300_000 : 15_000);
  const shutdownFlushMs = (options.shutdownFlushSeconds ?? bridgeDefaults.shutdownFlushSeconds) * 1000;
  const watchBackoff = validateBackoff(options.watchBackoff ?? { ...defaultBackoff, initialMs: 1_000 });
  const queueBackoff = validateBackoff(options.queueBackoff ?? defaultBackoff);

  const kubeConfig = loadKubeConfig(options.kubernetes);
  const sink =
    options.queueSink ??
    createQueueSink(options.queue, {
      ...(options.queueRequestTimeoutMs !== undefined && { requestTimeoutMs: options.queueRequestTimeoutMs }),
      ...(options.queueCredential !== undefined && { credential: options.queueCredential }),
      ...(options.queueCaCertPem !== undefined && { caCertPem: options.queueCaCertPem }),
      source: options.source,
    });
  const buffer = new ChangeBuffer({
    capacity,
    newEventId: randomUUID,
    now: Date.now,
    signalIntervalMs: bridgeDefaults.provisioningSignalIntervalMs,
  });
  const forwarded: BridgeStats['forwarded'] = { ADDED: 0, MODIFIED: 0, DELETED: 0, RESYNC: 0 };
  let stopping: Promise<void> | undefined;
  let backpressure = false;
  let backpressureEpisodes = 0;
  let resyncs = 0;

  const publisher = new QueuePublisher({
    buffer,
    sink,
    render: (pending) =>
      JSON.stringify(
        toCloudEvent(pending.change, {
          id: pending.eventId,
          source: options.source,
          time: new Date(pending.observedAt),
        }),
      ),
    concurrency: options.sendConcurrency ?? bridgeDefaults.sendConcurrency,
    backoff: queueBackoff,
    probeIntervalMs,
    logger,
    onProgress: () => releaseBackpressure(),
  });

  const seen = new Map<string, Seen>();
  const resources = watchedResources(kubeConfig);
  const watcher = <K extends WatchedKind>(kind: K): ResourceWatcher<K> =>
    new ResourceWatcher<K>({
      kubeConfig,
      resource: resources[kind],
      backoff: watchBackoff,
      logger,
      ...(options.watchFor ? { watch: options.watchFor(kind, kubeConfig) } : {}),
      onNotification: (verb, object, initialList) => onNotification(kind, verb, object, initialList),
    });
  const watchers: { [K in WatchedKind]: ResourceWatcher<K> } = {
    NodeClaim: watcher('NodeClaim'),
    Node: watcher('Node'),
    NodePool: watcher('NodePool'),
    AKSNodeClass: watcher('AKSNodeClass'),
    Pod: watcher('Pod'),
  };

  function onNotification<K extends WatchedKind>(
    kind: K,
    verb: InformerVerb,
    object: WatchedObjects[K],
    initialList: boolean,
  ): void {
    const namespace = kind === 'Pod' ? `${(object as WatchedObjects['Pod']).metadata.namespace}/` : '';
    const key = `${kind}/${namespace}${object.metadata.name}`;
    const decision = decide({ kind, verb, object, previous: seen.get(key), initialList });
    if (decision.next === undefined) seen.delete(key);
    else seen.set(key, decision.next);
    for (const forwardedChange of decision.changes) enqueue(forwardedChange);
  }

  function enqueue(objectChange: ObjectChange): void {
    const outcome = buffer.offer(objectChange);
    forwarded[objectChange.changeType] += 1;
    logger.debug('change observed', { change: objectChange, outcome, buffered: buffer.size });
    // Pods all share the provisioning signal (change-buffer.ts): merging them is the rule, not news.
    if (outcome === 'coalesced' && objectChange.changeType !== 'RESYNC' && objectChange.kind !== 'Pod') {
      logger.info('coalesced a change into one already waiting for the same object', {
        kind: objectChange.kind,
        name: objectChange.name,
        uid: objectChange.uid,
        changeType: objectChange.changeType,
      });
    }
    applyBackpressure();
    publisher.kick();
  }

  function applyBackpressure(): void {
    if (backpressure || !buffer.isFull()) return;
    backpressure = true;
    backpressureEpisodes += 1;
    for (const kind of watchedKinds) watchers[kind].pause();
    logger.warn('outbox full; pausing watches until the queue catches up', {
      buffered: buffer.size,
      capacity,
      resumeBelow,
    });
  }

  function releaseBackpressure(): void {
    if (!backpressure || buffer.size > resumeBelow || stopping !== undefined) return;
    backpressure = false;
    for (const kind of watchedKinds) watchers[kind].resume();
    logger.info('outbox drained; resuming watches', { buffered: buffer.size });
  }

  function resync(): number {
    if (backpressure || buffer.isFull()) {
      logger.warn('resync deferred: the outbox is full', { buffered: buffer.size, capacity });
      return 0;
    }
    let announced = 0;
    for (const kind of resyncedKinds) {
      if (!watchers[kind].synced) continue;
      for (const object of watchers[kind].objects()) {
        if (!needsWork(kind, object)) continue;
        if (buffer.isFull()) {
          logger.warn('resync cut short: the outbox is full; the rest follows next time', { announced });
          break;
        }
        enqueue(change(kind, object, 'RESYNC'));
        announced += 1;
      }
    }
    resyncs += 1;
    logger.info('resync', { announced, buffered: buffer.size });
    return announced;
  }

  /**
   * One provisionable pod, announced again: the provisioning window it opens solves over every
   * provisionable pod, so one message per period is enough however many are pending.
   */
  function resyncPods(): number {
    if (backpressure || buffer.isFull() || !watchers.Pod.synced) return 0;
    const pending = watchers.Pod.objects().find(isProvisionable);
    if (pending === undefined) return 0;
    enqueue(change('Pod', pending, 'RESYNC'));
    return 1;
  }

  function ready(): boolean {
    return readiness().ready;
  }

  function readiness(): Readiness {
    const unsynced = watchedKinds.filter((kind) => !watchers[kind].synced);
    const queueReachable = publisher.queueReachable(3 * probeIntervalMs);
    return {
      ready: unsynced.length === 0 && queueReachable && stopping === undefined,
      details: {
        informersSynced: unsynced.length === 0,
        unsynced,
        queueReachable,
        lastQueueError: publisher.stats().lastQueueError,
        buffered: buffer.size,
        backpressure,
        stopping: stopping !== undefined,
      },
    };
  }

  let healthServer: HealthServer | undefined;
  if (options.healthPort !== undefined) {
    healthServer = await startHealthServer({
      port: options.healthPort,
      ...(options.healthHost !== undefined && { host: options.healthHost }),
      readiness,
    });
  }

  publisher.start();
  for (const kind of watchedKinds) watchers[kind].start();
  const resyncTimer = setInterval(resync, resyncMs);
  resyncTimer.unref();
  const podResyncTimer = setInterval(resyncPods, podResyncMs);
  podResyncTimer.unref();
  logger.info('event bridge started', {
    queue: options.queue.queueName,
    queueMode: options.queue.mode,
    source: options.source,
    healthPort: healthServer?.port,
    resyncSeconds: resyncMs / 1000,
    bufferCapacity: capacity,
  });

  async function stop(): Promise<void> {
    stopping ??= (async () => {
      clearInterval(resyncTimer);
      clearInterval(podResyncTimer);
      await Promise.all(watchedKinds.map((kind) => watchers[kind].stop()));
      const drained = await publisher.flush(shutdownFlushMs);
      publisher.stop();
      if (drained) {
        logger.info('event bridge stopped; outbox drained', { published: publisher.stats().sent });
      } else {
        // The successor's initial list re-announces every object that still needs work, and the
        // timer-triggered sweep covers the rest.
        logger.warn('event bridge stopped before the outbox drained', {
          undelivered: buffer.size,
          deadlineSeconds: shutdownFlushMs / 1000,
        });
      }
      await healthServer?.close();
    })();
    return stopping;
  }

  return {
    stop,
    ready,
    healthPort: healthServer?.port,
    resyncNow: resync,
    stats: () => {
      const queueStats = publisher.stats();
      return {
        published: queueStats.sent,
        sendFailures: queueStats.sendFailures,
        buffered: buffer.size,
        coalesced: buffer.coalescedTotal,
        backpressure,
        backpressureEpisodes,
        resyncs,
        forwarded: { ...forwarded },
        queue: { ...queueStats, reachable: publisher.queueReachable(3 * probeIntervalMs) },
        informers: {
          NodeClaim: watchers.NodeClaim.stats(),
          Node: watchers.Node.stats(),
          NodePool: watchers.NodePool.stats(),
          AKSNodeClass: watchers.AKSNodeClass.stats(),
          Pod: watchers.Pod.stats(),
        },
      };
    },
  };
}

function loadKubeConfig(target: BridgeOptions['kubernetes']): KubeConfig {
  if (target.mode === 'kubeConfig') return target.kubeConfig;
  const kubeConfig = new KubeConfig();
  if (target.mode === 'inCluster') kubeConfig.loadFromCluster();
  else kubeConfig.loadFromFile(target.kubeconfigPath);
  return kubeConfig;
}
