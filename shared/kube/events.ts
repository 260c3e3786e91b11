// Kubernetes Events on the objects this system manages, so `kubectl describe` shows what happened and why.
// Repeats are aggregated as client-go's recorder aggregates them: one Event per object, type, reason and
// message, whose count and lastTimestamp grow (`kubectl describe` shows "x50 over 3m"), so a loop that
// keeps saying the same thing updates one object instead of flooding the namespace. The Event's name is
// derived from the series, so another instance of the app, or this one after a restart, counts on the same
// Event; every update is guarded by the resourceVersion it was computed from.
import type { CoreV1Event } from '@kubernetes/client-node';
import type { Node } from '../models/kube.js';
import type { KubeClients } from './client.js';
import { isAlreadyExists, isNotFound } from './errors.js';
import { retryOnConflict } from './retry-on-conflict.js';
import {
  EVENT_MESSAGE_LIMIT,
  EVENT_OBJECT_LIMITS,
  EVENT_REASON_LIMITS,
  EVENT_SERIES_WINDOW_MS,
  eventObjectKey,
  eventSeriesName,
  nextEventSeriesCount,
  takeToken,
  type EventSeriesKey,
  type TokenBucket,
  type TokenBucketLimits,
} from '../decisions/event-series.js';
import type { Logger } from '../observability/logger.js';

export interface EventTarget {
  apiVersion: string;
  kind: string;
  name: string;
  uid?: string;
  /** Cluster-scoped objects have no namespace; their events live in `default`, as kubectl expects. */
  namespace?: string;
}

/** Writes Events; `Reason` narrows the reasons a caller may use (the lifecycle's: shared/decisions/event-reasons.ts). */
/** A Node as an event's involved object. */
export function nodeTarget(node: Node): EventTarget {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    name: node.metadata.name,
    ...(node.metadata.uid ? { uid: node.metadata.uid } : {}),
  };
}

export interface EventRecorder<Reason extends string = string> {
  warning(target: EventTarget, reason: Reason, message: string): Promise<void>;
  normal(target: EventTarget, reason: Reason, message: string): Promise<void>;
}

export interface EventAggregationOptions {
  /** A repeat within this long of the last one counts on the same Event (client-go's 10 minutes). */
  windowMs?: number;
  /** New Events per object: a burst, then one per interval (client-go's 25, then one per 5 minutes). */
  limits?: TokenBucketLimits;
  /** Occurrences per reason in this process, whatever the object (EVENT_REASON_LIMITS by default). */
  reasonLimits?: Readonly<Record<string, TokenBucketLimits>>;
  now?: () => Date;
}

/** How many series and objects one process remembers (client-go's LRU size); the oldest go first. */
const REMEMBERED_LIMIT = 4096;

export function kubeEventRecorder(
  clients: () => Promise<KubeClients>,
  component: string,
  log: Logger,
  options: EventAggregationOptions = {},
): EventRecorder {
  const windowMs = options.windowMs ?? EVENT_SERIES_WINDOW_MS;
  const limits = options.limits ?? EVENT_OBJECT_LIMITS;
  const reasonLimits = options.reasonLimits ?? EVENT_REASON_LIMITS;
  const reasonBuckets = new Map<string, TokenBucket>();
  /** Whether the reason's process-wide rate lets one more occurrence through now (taking its token). */
  const reasonAllows = (reason: string): boolean => {
    const reasonLimit = reasonLimits[reason];
    if (!reasonLimit) return true;
    const taken = takeToken(reasonBuckets.get(reason), now().getTime(), reasonLimit);
    reasonBuckets.set(reason, taken.bucket);
    return taken.allowed;
  };
  const now = options.now ?? (() => new Date());
  // The Event each series last wrote (with its resourceVersion), so a repeat is one guarded write.
  const written = new Map<string, CoreV1Event>();
  const buckets = new Map<string, TokenBucket>();
  // Occurrences of one series run one after another, so concurrent repeats do not conflict with each other.
  const queues = new Map<string, Promise<void>>();

  const occur = async (key: EventSeriesKey, namespace: string): Promise<void> => {
    const { core } = await clients();
    const name = eventSeriesName(key);
    const read = async (): Promise<CoreV1Event | undefined> => {
      try {
        return await core.readNamespacedEvent({ name, namespace });
      } catch (error) {
        if (isNotFound(error)) return undefined;
        throw error;
      }
    };
    const create = (): Promise<CoreV1Event> =>
      core.createNamespacedEvent({ namespace, body: eventBody(key, name, namespace, undefined, now()) });
    const update = (current: CoreV1Event): Promise<CoreV1Event> =>
      core.replaceNamespacedEvent({ name, namespace, body: eventBody(key, name, namespace, current, now()) });

    let current = written.get(name);
    if (!current) {
      const bucketKey = eventObjectKey(key);
      const taken = takeToken(buckets.get(bucketKey), now().getTime(), limits);
      remember(buckets, bucketKey, taken.bucket);
      if (!taken.allowed) {
        log.debug('event dropped: too many new events on one object', {
          reason: key.reason,
          target: key.involvedObject.name,
        });
        return;
      }
      try {
        remember(written, name, await create());
        return;
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        // Another instance (or this one before a restart) started the series: count on its Event.
        current = await read();
        if (!current) {
          remember(written, name, await create());
          return;
        }
      }
    }
    try {
      const saved = await retryOnConflict(current, update, read);
      // Gone between the conflict and the reread (the API server's event TTL): start the series again.
      remember(written, name, saved ?? (await create()));
    } catch (error) {
      if (!isNotFound(error)) throw error;
      remember(written, name, await create());
    }
  };

  const record = (type: 'Normal' | 'Warning', target: EventTarget, reason: string, message: string) => {
    // Before anything is queued or read: an occurrence over its reason's rate costs no request at all.
    if (!reasonAllows(reason)) {
      log.debug('event dropped: over its reason’s rate', { reason, target: target.name });
      return Promise.resolve();
    }
    const namespace = target.namespace ?? 'default';
    const key: EventSeriesKey = {
      component,
      type,
      reason,
      message: message.slice(0, EVENT_MESSAGE_LIMIT),
      involvedObject: {
        apiVersion: target.apiVersion,
        kind: target.kind,
        name: target.name,
        ...(target.namespace ? { namespace: target.namespace } : {}),
        ...(target.uid ? { uid: target.uid } : {}),
      },
    };
    const name = eventSeriesName(key);
    const previous = queues.get(name) ?? Promise.resolve();
    const next = previous.then(() =>
      occur(key, namespace).catch((error: unknown) => {
        written.delete(name);
        // Events are best effort: losing one must never fail the reconcile that produced it.
        log.warn('could not record event', { reason, target: target.name, error });
      }),
    );
    queues.set(name, next);
    void next.then(() => {
      if (queues.get(name) === next) queues.delete(name);
    });
    return next;
  };

  function eventBody(
    key: EventSeriesKey,
    name: string,
    namespace: string,
    current: CoreV1Event | undefined,
    at: Date,
  ): CoreV1Event {
    const series = nextEventSeriesCount(
      current && {
        ...(current.count === undefined ? {} : { count: current.count }),
        ...(current.firstTimestamp ? { firstTimestamp: new Date(current.firstTimestamp) } : {}),
        ...(current.lastTimestamp ? { lastTimestamp: new Date(current.lastTimestamp) } : {}),
      },
      at,
      windowMs,
    );
    return {
      metadata: {
        name,
        namespace,
        ...(current?.metadata.resourceVersion ? { resourceVersion: current.metadata.resourceVersion } : {}),
      },
      // The API server rejects an event on a namespaced object whose involvedObject names no namespace.
      involvedObject: key.involvedObject,
      type: key.type,
      reason: key.reason,
      message: key.message,
      source: { component: key.component },
      reportingComponent: key.component,
      ...series,
    };
  }

  return {
    warning: (target, reason, message) => record('Warning', target, reason, message),
    normal: (target, reason, message) => record('Normal', target, reason, message),
  };
}

function remember<V>(map: Map<string, V>, key: string, value: V): void {
  map.delete(key);
  map.set(key, value);
  if (map.size > REMEMBERED_LIMIT) {
    const oldest = map.keys().next();
    if (!oldest.done) map.delete(oldest.value);
  }
}
