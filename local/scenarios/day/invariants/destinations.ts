// No node disrupted again within consolidateAfter of becoming a destination: a node that just received
// pods (a replacement, or a node the scheduler put evicted or new pods on) is not consolidated before its
// NodePool's consolidateAfter has passed since the last pod arrived. Drift and expiration are not
// consolidation and are not judged. Pure.
import { disruptionReasonOf } from '../../../../shared/decisions/disruption-state.js';
import { poolOf, result, secondsAfter, type DayHistory, type InvariantResult } from './history.js';

export function checkDestinations(history: DayHistory, slackMs: number, origin: number): InvariantResult {
  const consolidateAfter = new Map(history.pools.map((p) => [p.name, p.consolidateAfterMs]));
  const lastArrival = new Map<string, number>();
  const boundTo = new Map<string, string>();
  const events = [
    ...history.pods.map((pod) => ({ at: pod.at, pod })),
    ...history.nodeClaims.map((claim) => ({ at: claim.at, claim })),
  ].sort((a, b) => a.at - b.at);
  const violations: string[] = [];
  const marked = new Set<string>();
  let judged = 0;
  let closest = Infinity;
  for (const event of events) {
    if ('pod' in event) {
      const { object, type, at } = event.pod;
      if (object.metadata.labels?.app === history.daemonSet) continue;
      const node = object.spec?.nodeName;
      const name = object.metadata.name;
      if (type !== 'DELETED' && node && boundTo.get(name) !== node) lastArrival.set(node, at);
      if (type === 'DELETED') boundTo.delete(name);
      else if (node) boundTo.set(name, node);
      continue;
    }
    const { object, at } = event.claim;
    const reason = disruptionReasonOf(object);
    const name = object.metadata.name;
    if (reason !== 'Empty' && reason !== 'Underutilized') {
      if (!reason) marked.delete(name);
      continue;
    }
    if (marked.has(name)) continue;
    marked.add(name);
    const node = object.status?.nodeName;
    const arrived = node ? lastArrival.get(node) : undefined;
    const after = consolidateAfter.get(poolOf(object));
    if (arrived === undefined || after === undefined) continue;
    judged += 1;
    const since = at - arrived;
    closest = Math.min(closest, since - after);
    if (since + slackMs < after) {
      violations.push(
        `${secondsAfter(at, origin)}: ${name} marked ${reason} ${(since / 1000).toFixed(1)} s after a pod arrived on ` +
          `its node (consolidateAfter ${(after / 1000).toFixed(1)} s)`,
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
