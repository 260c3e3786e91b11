// Every pod that can be scheduled is Running within a bound: from the moment it was first seen (the
// ReplicaSet controller created it) to its first Running version. Pods deleted while still pending (a
// scale-down) are not in the percentiles but are held to the bound too; pods still pending at the end
// count with the time they have waited. The
// bound grows by the time the cluster could not act while the pod waited (API server down, host dead).
// DaemonSet pods are bound by their controller, not provisioned for, and are not counted.
//
// A pod bound to a node whose kubelet the weather stopped cannot start there, and nothing can know until
// kube-controller-manager marks the Node NotReady (its grace period, real time): such a pod's wait counts
// from that moment, when node repair can act (or from never, if the node did not go NotReady in the
// history: then nothing could have acted, and the end state says whether the cluster settled). Pure.
import { disturbedDuring, result, type DayHistory, type InvariantResult } from './history.js';

export interface PendingFigures {
  count: number;
  p50Ms: number;
  p95Ms: number;
  p99Ms: number;
  maxMs: number;
  /** Pods deleted while still pending (a scale-down came first). */
  withdrawn: number;
}

export interface PendingSpan {
  name: string;
  from: number;
  to: number;
  /** Running at `to`; otherwise deleted while pending (withdrawn) or still pending at the end. */
  outcome: 'running' | 'withdrawn' | 'pending';
  /** Bound to a node whose kubelet was stopped: `from` is when that node went NotReady. */
  onBrokenNode?: string;
  /** How the pod's last recorded version stood with the scheduler, for a pod that never ran. */
  lastSeen?: string;
}

/** When each node the weather broke was first seen not Ready after its kubelet stopped. */
function brokenSince(history: DayHistory): Map<string, { at: number; notReadyAt?: number }> {
  const broken = new Map<string, { at: number; notReadyAt?: number }>(
    history.brokenNodes.map((b) => [b.node, { at: b.at }]),
  );
  for (const { object, at } of history.nodes) {
    const entry = broken.get(object.metadata.name);
    if (!entry || entry.notReadyAt !== undefined || at < entry.at) continue;
    const ready = object.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    if (ready !== undefined && ready !== 'True') entry.notReadyAt = at;
  }
  return broken;
}

export function pendingDurations(history: DayHistory, endAt: number): PendingSpan[] {
  const seen = new Map<string, PendingSpan>();
  const broken = brokenSince(history);
  for (const { object, type, at } of history.pods) {
    if (object.metadata.labels?.app === history.daemonSet) continue;
    const name = object.metadata.name;
    let span = seen.get(name);
    if (!span) {
      span = { name, from: at, to: endAt, outcome: 'pending' };
      seen.set(name, span);
    }
    if (span.outcome !== 'pending') continue;
    span.lastSeen = schedulingState(object, at, span.from);
    const boundTo = object.spec?.nodeName;
    const brokenNode = boundTo !== undefined ? broken.get(boundTo) : undefined;
    if (boundTo !== undefined && brokenNode !== undefined && at >= brokenNode.at) span.onBrokenNode = boundTo;
    if (object.status?.phase === 'Running' && type !== 'DELETED') {
      span.to = at;
      span.outcome = 'running';
    } else if (type === 'DELETED' || object.metadata.deletionTimestamp) {
      span.to = at;
      span.outcome = 'withdrawn';
    }
  }
  return [...seen.values()].map((span) => {
    if (span.onBrokenNode === undefined) return span;
    const notReadyAt = broken.get(span.onBrokenNode)?.notReadyAt ?? span.to;
    return { ...span, from: Math.min(span.to, Math.max(span.from, notReadyAt)) };
  });
}

/**
 * What a late pod's last version says about why it waited: bound or not, nominated for a preemption,
 * and its PodScheduled condition (only an Unschedulable one makes a pod provisionable).
 */
function schedulingState(pod: DayHistory['pods'][number]['object'], at: number, from: number): string {
  const scheduled = pod.status?.conditions?.find((c) => c.type === 'PodScheduled');
  const parts = [
    pod.spec?.nodeName ? `bound to ${pod.spec.nodeName}` : 'not bound',
    ...(pod.status?.nominatedNodeName ? [`nominated to ${pod.status.nominatedNodeName}`] : []),
    scheduled
      ? `PodScheduled=${scheduled.status}${scheduled.reason ? ` ${scheduled.reason}` : ''}` +
        (scheduled.lastTransitionTime ? ` since ${scheduled.lastTransitionTime}` : '')
      : 'no PodScheduled condition',
  ];
  return `${parts.join(', ')} (version seen ${((at - from) / 1000).toFixed(1)} s after the pod)`;
}

/** A wall-clock time as the stack's log lines write it, to find what happened around a late pod. */
const clock = (at: number): string => new Date(at).toISOString().slice(11, 23);

const outcomeWords: Record<PendingSpan['outcome'], string> = {
  running: 'Running',
  withdrawn: 'deleted, never Running,',
  pending: 'still pending',
};

export function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return 0;
  const index = Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1));
  return sorted[index] as number;
}

export function checkPending(
  history: DayHistory,
  boundMs: number,
  endAt: number,
): { invariant: InvariantResult; figures: PendingFigures } {
  const spans = pendingDurations(history, endAt);
  // Percentiles over the pods that got to run; the bound over every pod, also one withdrawn after
  // waiting too long.
  const ran = spans.filter((d) => d.outcome === 'running').sort((a, b) => a.to - a.from - (b.to - b.from));
  const waits = ran.map((d) => d.to - d.from);
  const slowest = ran.at(-1);
  const late = spans.filter((d) => d.to - d.from > boundMs + disturbedDuring(history, d.from, d.to));
  const withdrawn = spans.filter((d) => d.outcome === 'withdrawn').length;
  const onBroken = spans.filter((d) => d.onBrokenNode !== undefined).length;
  const figures: PendingFigures = {
    count: waits.length,
    p50Ms: percentile(waits, 50),
    p95Ms: percentile(waits, 95),
    p99Ms: percentile(waits, 99),
    maxMs: waits.at(-1) ?? 0,
    withdrawn,
  };
  const s = (ms: number) => `${(ms / 1000).toFixed(1)} s`;
  return {
    figures,
    invariant: result(
      `every schedulable pod Running within ${s(boundMs)} (plus any outage it waited through)`,
      late.map(
        (d) =>
          `${d.name} ${outcomeWords[d.outcome]} after ${s(d.to - d.from)} (from ${clock(d.from)})` +
          (d.outcome !== 'running' && d.lastSeen ? `; last seen ${d.lastSeen}` : ''),
      ),
      `${figures.count} pods: pending → Running p50 ${s(figures.p50Ms)}, p95 ${s(figures.p95Ms)}, ` +
        `p99 ${s(figures.p99Ms)}, max ${s(figures.maxMs)}` +
        (slowest ? ` (${slowest.name} from ${clock(slowest.from)})` : '') +
        `; ${withdrawn} deleted before they ran` +
        (onBroken > 0 ? `; ${onBroken} bound to a node whose kubelet died, counted from its NotReady` : ''),
    ),
  };
}
