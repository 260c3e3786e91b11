// No node is marked for consolidation while a pod annotated karpenter.sh/do-not-disrupt runs on it.
// Upstream blocks drift for such pods too; this app's drift reads only the Node's and NodeClaim's
// annotation, not the pods' (docs/day-in-the-life.md): drift marks of such nodes are counted in the
// figure, not judged, until it does. Expiration is forceful (upstream v1) and not judged; neither is node
// repair (Unhealthy), which ignores do-not-disrupt as upstream's does (a broken node protects nothing):
// its marks of such nodes are counted in the figure. Pure.
import { disruptionReasonOf } from '../../../../shared/decisions/disruption-state.js';
import { result, secondsAfter, type DayHistory, type InvariantResult } from './history.js';

export function checkDoNotDisrupt(history: DayHistory, origin: number): InvariantResult {
  const pinned = new Set(history.doNotDisruptSets);
  const pinnedOn = new Map<string, string>();
  const events = [
    ...history.pods.map((pod) => ({ at: pod.at, pod })),
    ...history.nodeClaims.map((claim) => ({ at: claim.at, claim })),
  ].sort((a, b) => a.at - b.at);
  const marked = new Set<string>();
  const violations: string[] = [];
  let protectedNodes = 0;
  const drifted: string[] = [];
  const repaired: string[] = [];
  const counted = new Set<string>();
  for (const event of events) {
    if ('pod' in event) {
      const { object, type } = event.pod;
      if (!pinned.has(object.metadata.labels?.app ?? '')) continue;
      const running = type !== 'DELETED' && !object.metadata.deletionTimestamp && object.spec?.nodeName;
      if (running) pinnedOn.set(object.metadata.name, object.spec?.nodeName ?? '');
      else pinnedOn.delete(object.metadata.name);
      continue;
    }
    const { object, at } = event.claim;
    const node = object.status?.nodeName;
    if (node && [...pinnedOn.values()].includes(node) && !counted.has(node)) {
      counted.add(node);
      protectedNodes += 1;
    }
    const reason = disruptionReasonOf(object);
    if (!reason) {
      marked.delete(object.metadata.name);
      continue;
    }
    if (marked.has(object.metadata.name)) continue;
    marked.add(object.metadata.name);
    const pods = [...pinnedOn.entries()].filter(([, n]) => n === node).map(([p]) => p);
    if (node && pods.length > 0 && reason === 'Drifted') drifted.push(object.metadata.name);
    else if (node && pods.length > 0 && reason === 'Unhealthy') repaired.push(object.metadata.name);
    else if (node && pods.length > 0)
      violations.push(
        `${secondsAfter(at, origin)}: ${object.metadata.name} marked ${reason} with ${pods.join(', ')} on it`,
      );
  }
  return result(
    'no node with a do-not-disrupt pod marked for consolidation',
    violations,
    `${protectedNodes} nodes held do-not-disrupt pods; ${drifted.length} of them marked Drifted anyway` +
      (drifted.length > 0 ? ` (${drifted.join(', ')}: drift does not read pods' do-not-disrupt yet)` : '') +
      `; ${repaired.length} repaired (Unhealthy ignores do-not-disrupt, as upstream)`,
  );
}
