// Which informer notifications become queue messages. Pure: the caller keeps, per object, the `Seen`
// record this module returns and hands it back on the object's next notification.
//
// Handlers are level-triggered, so a message is only useful when something a handler acts on changed.
// A NodeClaim update is forwarded when its generation, deletionTimestamp, finalizers, providerID,
// nodeName or its conditions' (type, status, reason, observedGeneration) changed, but for the
// conditions only the sweep and the workflows act on (Drifted, DisruptionReason, Consolidatable): no
// handler of a NodeClaim's event reads them, and a drift or a scale-down sets one on every node at once
// (1,000 no-op messages at 1,000 nodes, ahead of the deletions and pods the handlers do act on). Once a
// NodeClaim has its VM (a providerID) and is not being deleted, no update is forwarded at all: its
// handler only launches and terminates, the launch's progress and outcome are the launch monitor's (and
// the sweep's launch-monitor step keeps a monitor running), and the rest of its life (Registered,
// Initialized, the nodeName) is node-join's, driven by the Node's own events. At 1,000 nodes the
// node-join transitions were eight messages a NodeClaim, each a read that found it launched, and they
// held the Node events that register and initialize the drift's replacements 40 s behind; then the
// launch's own writes (the providerID, then Launched) were two a NodeClaim of a 1,000-node burst, each
// read only to find it launched, a third of the burst's messages.
// Condition messages and lastTransitionTime are prose and bookkeeping; capacity, allocatable, imageID and lastPodEventTime
// change as side effects of the handlers' own writes or of pod churn. Forwarding those would turn every
// status heartbeat into a function invocation without giving any handler a new decision to make.
// Labels and annotations are left out for the same reason (but for the NodePool and initialized labels of
// a Node, which say whether it awaits initialization); the timer-triggered sweep is the safety net
// for anything a handler cares about that is not forwarded here. The one exception to "initialized Nodes
// are never forwarded" is a spot eviction notice (PreemptionScheduled=True): Azure evicts about 30 s
// later, too soon to wait for the sweep, so the Node is forwarded once when the notice appears.
import type { ChangeType, ObjectChange, WatchedKind } from '../shared/events/cloud-event.js';
import { isProvisionable as isProvisionablePod } from '../shared/decisions/provisionable-pod.js';
import { awaitsInitialization } from '../shared/decisions/initialization.js';
import { carriesEvictionNotice } from '../shared/decisions/node-repair/eviction-notice.js';
import { isAksNodeClassRef } from '../shared/decisions/ownership.js';
import type { NodeClaim, NodePool } from '../shared/models/karpenter.js';
import { ConditionTypes, WellKnown } from '../shared/models/karpenter.js';
import { CONSOLIDATABLE_CONDITION } from '../shared/decisions/consolidation/timing.js';
import type { Node } from '../shared/models/kube.js';
import type { PodView, WatchedObject, WatchedObjects } from './projection.js';

export type InformerVerb = 'add' | 'update' | 'delete';

/** What the bridge remembers about an object it forwarded, to compare the next version against. */
export interface Seen {
  uid: string;
  digest: string;
}

export interface Notification<K extends WatchedKind = WatchedKind> {
  kind: K;
  verb: InformerVerb;
  object: WatchedObjects[K];
  /** What was remembered for this kind and name, if anything. */
  previous: Seen | undefined;
  /**
   * True while an informer replays its first list. Those adds are existing objects, not changes: only
   * the ones that still need work are announced, so a bridge restart does not flood the queue.
   */
  initialList: boolean;
}

export interface Decision {
  changes: ObjectChange[];
  /** What to remember for this kind and name from now on; undefined forgets it. */
  next: Seen | undefined;
}

export const AZURE_PROVIDER_ID_PREFIX = 'azure://';

export function hasUnregisteredTaint(node: Node): boolean {
  return (node.spec.taints ?? []).some((taint) => taint.key === WellKnown.unregisteredTaintKey);
}

/** A NodeClaim or Node that a handler still has to act on; the periodic resync re-announces these. */
export function needsWork(kind: WatchedKind, object: WatchedObject): boolean {
  switch (kind) {
    case 'NodeClaim': {
      const nodeClaim = object as NodeClaim;
      if (!isAksNodeClassRef(nodeClaim.spec.nodeClassRef)) return false;
      if (nodeClaim.metadata.deletionTimestamp !== undefined) return true;
      if (!nodeClaim.status?.providerID) return true;
      const registered = nodeClaim.status.conditions?.find((condition) => condition.type === 'Registered');
      return registered?.status !== 'True';
    }
    case 'Node':
      return hasUnregisteredTaint(object as Node) || carriesEvictionNotice(object as Node);
    case 'NodePool':
    case 'AKSNodeClass':
      return false;
    case 'Pod':
      return isProvisionable(object as PodView);
  }
}

/** Karpenter's IsProvisionable, on the bridge's slim copy of a pending pod. */
export function isProvisionable(pod: PodView): boolean {
  return isProvisionablePod(pod);
}

export function decide(notification: Notification): Decision {
  switch (notification.kind) {
    case 'NodeClaim': {
      const nodeClaim = notification.object as NodeClaim;
      return decideOwned(
        notification,
        isAksNodeClassRef(nodeClaim.spec.nodeClassRef),
        !hasVmAndLives(nodeClaim),
      );
    }
    case 'NodePool':
      return decideOwned(
        notification,
        isAksNodeClassRef((notification.object as NodePool).spec.template.spec.nodeClassRef),
      );
    case 'AKSNodeClass':
      return decideOwned(notification, true);
    case 'Node':
      return decideNode(notification as Notification<'Node'>);
    case 'Pod':
      return decidePod(notification as Notification<'Pod'>);
  }
}

/**
 * Pods: a pod is announced when it becomes provisionable (one change per pod, however often the
 * scheduler retries it); only provisionable pods are remembered. The announcement only wakes the
 * provisioning window, which then reads every provisionable pod itself, so the outbox merges every pod's
 * change into one provisioning signal (change-buffer.ts).
 */
function decidePod(notification: Notification<'Pod'>): Decision {
  const { verb, object: pod, previous } = notification;
  if (verb === 'delete' || !isProvisionable(pod)) return { changes: [], next: undefined };
  const seen: Seen = { uid: pod.metadata.uid ?? '', digest: digestOf('Pod', pod) };
  if (previous !== undefined && previous.uid === seen.uid) return { changes: [], next: seen };
  return { changes: [change('Pod', pod, verb === 'add' ? 'ADDED' : 'MODIFIED')], next: seen };
}

/**
 * NodeClaims, NodePools and AKSNodeClasses: an object that is ours is remembered and forwarded on add,
 * on delete, and on updates that change its digest. One that stops being ours is announced once, so a
 * handler can let go of it.
 */
/** A NodeClaim with its VM that is not being deleted: none of its updates gives a handler work. */
function hasVmAndLives(nodeClaim: NodeClaim): boolean {
  return Boolean(nodeClaim.status?.providerID) && nodeClaim.metadata.deletionTimestamp === undefined;
}

function decideOwned(notification: Notification, ours: boolean, updatesMatter = true): Decision {
  const { kind, verb, object, previous, initialList } = notification;
  const uid = object.metadata.uid ?? '';
  const seen: Seen | undefined = ours ? { uid, digest: digestOf(kind, object) } : undefined;

  if (verb === 'delete') {
    const wasOurs = ours || (previous !== undefined && previous.uid === uid);
    return { changes: wasOurs ? [change(kind, object, 'DELETED')] : [], next: undefined };
  }

  const changes: ObjectChange[] = [];
  // A name reused by a new object while the watch was down: the old one is gone.
  if (previous !== undefined && previous.uid !== uid) {
    changes.push({ ...change(kind, object, 'DELETED'), uid: previous.uid });
  }
  const sameObject = previous !== undefined && previous.uid === uid;
  if (verb === 'add' && initialList && !sameObject) {
    if (ours && needsWork(kind, object)) changes.push(change(kind, object, 'ADDED'));
    return { changes, next: seen };
  }
  if (!sameObject) {
    if (ours) changes.push(change(kind, object, verb === 'add' ? 'ADDED' : 'MODIFIED'));
    return { changes, next: seen };
  }
  if (!ours || (updatesMatter && (seen === undefined || seen.digest !== previous.digest))) {
    changes.push(change(kind, object, 'MODIFIED'));
  }
  return { changes, next: seen };
}

/**
 * Nodes: registration wants to hear about a Node while it carries `karpenter.sh/unregistered`,
 * initialization while a registered Node is not yet labelled initialized (its Ready and its startup
 * taints decide it), node repair when a Node gets a spot eviction notice (PreemptionScheduled=True: the
 * repair starts from the event, within Azure's 30 s notice), and termination and garbage collection want
 * to hear when an Azure Node goes away. Only those Nodes are remembered, so a Node is forwarded when the
 * notice appears and not on its heartbeats while it stays, and forgotten again when the notice goes; an
 * initialized Node's heartbeats are never forwarded.
 */
function decideNode(notification: Notification<'Node'>): Decision {
  const { verb, object: node, previous } = notification;
  if (verb === 'delete') {
    const azure = node.spec.providerID?.startsWith(AZURE_PROVIDER_ID_PREFIX) ?? false;
    return { changes: azure ? [change('Node', node, 'DELETED')] : [], next: undefined };
  }
  if (!hasUnregisteredTaint(node) && !awaitsInitialization(node) && !carriesEvictionNotice(node)) {
    return { changes: [], next: undefined };
  }
  const uid = node.metadata.uid ?? '';
  const seen: Seen = { uid, digest: digestOf('Node', node) };
  const unchanged = previous !== undefined && previous.uid === uid && previous.digest === seen.digest;
  if (unchanged) return { changes: [], next: seen };
  const changeType: ChangeType = verb === 'add' ? 'ADDED' : 'MODIFIED';
  return { changes: [change('Node', node, changeType)], next: seen };
}

/** NodeClaim conditions that only the sweep and the workflows act on (see the top of this file). */
const SWEEP_ONLY_CONDITIONS: ReadonlySet<string> = new Set([
  ConditionTypes.drifted,
  ConditionTypes.disruptionReason,
  CONSOLIDATABLE_CONDITION,
]);

/** The fields a handler acts on, as a comparable string. */
export function digestOf(kind: WatchedKind, object: WatchedObject): string {
  const meta = object.metadata;
  switch (kind) {
    case 'NodeClaim': {
      // Compared only while the NodeClaim has no VM or is being deleted (hasVmAndLives).
      const status = (object as NodeClaim).status;
      const conditions = [...(status?.conditions ?? [])]
        .filter((c) => !SWEEP_ONLY_CONDITIONS.has(c.type))
        .map((c) => [c.type, c.status, c.reason, c.observedGeneration ?? null])
        .sort(compareTuples);
      return JSON.stringify([
        meta.generation ?? null,
        meta.deletionTimestamp ?? null,
        [...(meta.finalizers ?? [])].sort(),
        status?.providerID ?? null,
        status?.nodeName ?? null,
        conditions,
      ]);
    }
    case 'Node': {
      const node = object as Node;
      const taints = (node.spec.taints ?? [])
        .map((t) => [t.key, t.value ?? '', t.effect])
        .sort(compareTuples);
      const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status ?? null;
      return JSON.stringify([node.spec.providerID ?? null, taints, ready, carriesEvictionNotice(node)]);
    }
    case 'NodePool':
    case 'AKSNodeClass':
      return JSON.stringify([meta.generation ?? null, meta.deletionTimestamp ?? null]);
    case 'Pod':
      return JSON.stringify([isProvisionable(object as PodView)]);
  }
}

export function change(kind: WatchedKind, object: WatchedObject, changeType: ChangeType): ObjectChange {
  const nodePool = kind === 'NodeClaim' ? object.metadata.labels?.[WellKnown.nodePoolLabel] : undefined;
  const namespace = kind === 'Pod' ? (object as PodView).metadata.namespace : undefined;
  return {
    kind,
    ...(namespace !== undefined && { namespace }),
    name: object.metadata.name,
    uid: object.metadata.uid ?? '',
    resourceVersion: object.metadata.resourceVersion ?? '',
    changeType,
    ...(nodePool ? { nodePool } : {}),
  };
}

function compareTuples(a: unknown[], b: unknown[]): number {
  const left = JSON.stringify(a);
  const right = JSON.stringify(b);
  return left < right ? -1 : left > right ? 1 : 0;
}
