// No PodDisruptionBudget breached: every eviction (a pod that starts terminating on a Node tainted
// karpenter.sh/disrupted, i.e. drained) leaves at least the PDB's desired healthy pods of its set
// Running and Ready. A pod the ReplicaSet deletes in a scale-down is not an eviction: deletions within
// `scaleSlackMs` after its Deployment was scaled down are not judged. Replays every pod and Node version.
// Pure.
import { WellKnown } from '../../../../shared/models/index.js';
import { result, secondsAfter, type DayHistory, type DayPod, type InvariantResult } from './history.js';

const healthy = (pod: DayPod): boolean =>
  !pod.metadata.deletionTimestamp &&
  pod.status?.phase === 'Running' &&
  (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

export function checkPdbs(
  history: DayHistory,
  scaleSlackMs: number,
  origin: number,
  /** The day's end: the teardown deletes the PDBs with the workloads before the nodes, and is not judged. */
  until = Infinity,
): InvariantResult {
  const rules = new Map(history.pdbs.map((r) => [r.set, r]));
  const pods = new Map<string, DayPod>();
  const tainted = new Set<string>();
  const events = [
    ...history.pods.map((pod) => ({ at: pod.at, pod })),
    ...history.nodes.map((node) => ({ at: node.at, node })),
  ].sort((a, b) => a.at - b.at);
  const replicasAt = (set: string, at: number): number | undefined => {
    let found: number | undefined;
    for (const r of history.replicas) if (r.set === set && r.at <= at) found = r.replicas;
    return found;
  };
  const scaledDownJustBefore = (set: string, at: number): boolean => {
    const changes = history.replicas.filter((r) => r.set === set);
    return changes.some(
      (r, i) =>
        i > 0 && r.replicas < (changes[i - 1]?.replicas ?? 0) && r.at <= at && at - r.at <= scaleSlackMs,
    );
  };
  const violations: string[] = [];
  let evictions = 0;
  let tightest = Infinity;
  for (const event of events) {
    if ('node' in event) {
      const { object, type } = event.node;
      if (type !== 'DELETED' && (object.spec.taints ?? []).some((t) => t.key === WellKnown.disruptedTaintKey))
        tainted.add(object.metadata.name);
      else tainted.delete(object.metadata.name);
      continue;
    }
    const { object, type, at } = event.pod;
    if (at > until) break;
    const name = object.metadata.name;
    const before = pods.get(name);
    if (type === 'DELETED') pods.delete(name);
    else pods.set(name, object);
    const set = object.metadata.labels?.app ?? '';
    const rule = rules.get(set);
    const startsTerminating =
      Boolean(object.metadata.deletionTimestamp) && !before?.metadata.deletionTimestamp;
    const node = object.spec?.nodeName;
    if (!rule || !startsTerminating || !node || !tainted.has(node) || !before || !healthy(before)) continue;
    if (scaledDownJustBefore(set, at)) continue;
    evictions += 1;
    const expected = replicasAt(set, at) ?? 0;
    const desired = rule.minAvailable ?? expected - (rule.maxUnavailable ?? 0);
    const left = [...pods.values()].filter((p) => p.metadata.labels?.app === set && healthy(p)).length;
    tightest = Math.min(tightest, left - desired);
    if (left < desired) {
      violations.push(
        `${secondsAfter(at, origin)}: ${name} evicted leaving ${left} healthy ${set} pods, PDB wants ${desired}`,
      );
    }
  }
  return result(
    'no PodDisruptionBudget breached',
    violations,
    evictions === 0
      ? 'no eviction of a PDB-protected pod'
      : `${evictions} evictions of PDB-protected pods; the tightest left ${tightest} above the PDB`,
  );
}
