// No node consolidated within consolidateAfter of becoming a destination: a node that just received pods
// (a replacement, or a node the scheduler put evicted or new pods on) is not consolidated before its
// NodePool's consolidateAfter has passed since the last pod arrived. Drift and expiration are not
// consolidation and are not judged. Pure.
//
// A consolidation is judged when it goes ahead: the NodeClaim is deleted while its Empty or Underutilized
// mark stands. A mark the executor put back at once (it found, on tainting, a pod that landed after the
// validation's read) moved no pod and is not judged. A pod the scheduler bound once the node carried
// karpenter.sh/disrupted raced the taint, which no autoscaler can prevent (the scheduler's cache lags the
// API): arrivals from TAINT_SKEW_MS before the taint was recorded on are that race, since the recorder's
// Node and pod watches deliver independently.
import { disruptionReasonOf } from '../../../../shared/decisions/disruption-state.js';
import { WellKnown } from '../../../../shared/models/index.js';
import type { Node } from '../../../../shared/models/index.js';
import { poolOf, result, secondsAfter, type DayHistory, type InvariantResult } from './history.js';

export const TAINT_SKEW_MS = 1_000;

const hasDisruptedTaint = (node: Node): boolean =>
  (node.spec.taints ?? []).some((t) => t.key === WellKnown.disruptedTaintKey);

/** The newest arrival on the node that came before its disrupted taint (less the watches' skew). */
function lastArrivalBeforeTaint(
  arrivals: readonly number[],
  taintedAt: number | undefined,
): number | undefined {
  const before = taintedAt === undefined ? Infinity : taintedAt - TAINT_SKEW_MS;
  let last: number | undefined;
  for (const at of arrivals) if (at < before && (last === undefined || at > last)) last = at;
  return last;
}

export function checkDestinations(history: DayHistory, slackMs: number, origin: number): InvariantResult {
  const consolidateAfter = new Map(history.pools.map((p) => [p.name, p.consolidateAfterMs]));
  const arrivals = new Map<string, number[]>();
  const taintedAt = new Map<string, number>();
  const boundTo = new Map<string, string>();
  const events = [
    ...history.pods.map((pod) => ({ at: pod.at, pod })),
    ...history.nodes.map((node) => ({ at: node.at, node })),
    ...history.nodeClaims.map((claim) => ({ at: claim.at, claim })),
  ].sort((a, b) => a.at - b.at);
  const violations: string[] = [];
  /** Consolidation marks standing, by NodeClaim: when and why. */
  const marked = new Map<string, { at: number; reason: string }>();
  const judgedClaims = new Set<string>();
  let judged = 0;
  let closest = Infinity;
  for (const event of events) {
    if ('pod' in event) {
      const { object, type, at } = event.pod;
      if (object.metadata.labels?.app === history.daemonSet) continue;
      const node = object.spec?.nodeName;
      const name = object.metadata.name;
      if (type !== 'DELETED' && node && boundTo.get(name) !== node) {
        arrivals.set(node, [...(arrivals.get(node) ?? []), at]);
      }
      if (type === 'DELETED') boundTo.delete(name);
      else if (node) boundTo.set(name, node);
      continue;
    }
    if ('node' in event) {
      const { object, type, at } = event.node;
      const name = object.metadata.name;
      if (type !== 'DELETED' && hasDisruptedTaint(object)) {
        if (!taintedAt.has(name)) taintedAt.set(name, at);
      } else taintedAt.delete(name);
      continue;
    }
    const { object, at } = event.claim;
    const reason = disruptionReasonOf(object);
    const name = object.metadata.name;
    if (reason !== 'Empty' && reason !== 'Underutilized') {
      marked.delete(name);
      continue;
    }
    const mark = marked.get(name) ?? { at, reason };
    marked.set(name, mark);
    if (!object.metadata.deletionTimestamp || judgedClaims.has(name)) continue;
    judgedClaims.add(name);
    const node = object.status?.nodeName;
    const arrived = node ? lastArrivalBeforeTaint(arrivals.get(node) ?? [], taintedAt.get(node)) : undefined;
    const after = consolidateAfter.get(poolOf(object));
    if (arrived === undefined || after === undefined) continue;
    judged += 1;
    const since = mark.at - arrived;
    closest = Math.min(closest, since - after);
    if (since + slackMs < after) {
      violations.push(
        `${secondsAfter(mark.at, origin)}: ${name} marked ${mark.reason} ${(since / 1000).toFixed(1)} s after a pod ` +
          `arrived on its node (consolidateAfter ${(after / 1000).toFixed(1)} s), and deleted`,
      );
    }
  }
  return result(
    'no node consolidated within consolidateAfter of becoming a destination',
    violations,
    judged === 0
      ? 'no consolidated node had received pods'
      : `${judged} consolidations of nodes that had received pods; the closest came ${(closest / 1000).toFixed(1)} s after consolidateAfter`,
  );
}
