// No PodDisruptionBudget breached: every eviction leaves at least the PDB's desired healthy pods of its set
// Running and Ready. An eviction is what the Eviction API did: it writes the pod's DisruptionTarget
// condition (reason EvictionByEvictionAPI) before it deletes the pod, so a deletion without it is not one —
// the ReplicaSet's deletions in a scale-down, which after an API server outage can come a minute late
// (kube-controller-manager's informers wait out their backoff before they watch again), are not judged.
// Neither is a pod that was already not Ready when it was evicted, by its own Ready condition's
// lastTransitionTime: the recorder is blind while the API server is down, and after the outage
// kube-controller-manager marks the pods of Nodes it heard nothing from not Ready, so the version before
// the eviction that the recorder kept can be Ready when the pod evicted was not (the Eviction API allows
// that eviction under `AlwaysAllow`, and it takes nothing from the PDB's healthy pods). The desired healthy
// pods are Kubernetes' desiredHealthy: minAvailable as it is, or the Deployment's replicas less
// maxUnavailable, never below 0. Beside each breach it says what the PDB's status said just before (what
// the API server judged the eviction by) and which pods of the set existed then, so a breach tells
// Kubernetes' own race (a status that had not yet counted an earlier eviction or an unready pod) from a
// misjudgment. Two such races are not judged: an eviction the status before it allowed, short only by pods
// being deleted without an eviction (a scale-down) that the status had not yet counted (the disruption
// controller lags; the Eviction API judges by its status, and the app can do no more than ask it), or
// short only because the Deployment had just been scaled up past the pods the status counted, while by
// the status's own desiredHealthy it left enough.
// Replays every pod version. Pure.
import {
  result,
  secondsAfter,
  type DayHistory,
  type DayPod,
  type InvariantResult,
  type PdbRule,
  type PdbStatusVersion,
} from './history.js';

const healthy = (pod: DayPod): boolean =>
  !pod.metadata.deletionTimestamp &&
  pod.status?.phase === 'Running' &&
  (pod.status.conditions ?? []).some((c) => c.type === 'Ready' && c.status === 'True');

/** The Eviction API's mark, written on the pod before the API server deletes it. */
export function evictedByEvictionApi(pod: DayPod): boolean {
  return (pod.status?.conditions ?? []).some(
    (c) => c.type === 'DisruptionTarget' && c.status === 'True' && c.reason === 'EvictionByEvictionAPI',
  );
}

/** When the eviction (or delete) was asked for: deletionTimestamp less the grace period added to it. */
function evictionRequestedAt(pod: DayPod): number {
  return (
    Date.parse(pod.metadata.deletionTimestamp ?? '') - (pod.metadata.deletionGracePeriodSeconds ?? 0) * 1000
  );
}

/**
 * The pod's Ready condition went False (or Unknown) clearly before its eviction was asked for: more than
 * the one second both RFC 3339 times may each have lost.
 */
function notReadyBeforeEviction(pod: DayPod): boolean {
  const ready = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready');
  if (!ready || ready.status === 'True') return false;
  const since = Date.parse(ready.lastTransitionTime ?? '');
  const requested = evictionRequestedAt(pod);
  return Number.isFinite(since) && Number.isFinite(requested) && since < requested - 1_000;
}

/**
 * Kubernetes' desiredHealthy: an integer minAvailable is absolute; maxUnavailable is taken from the scale
 * of the controller (the Deployment's replicas), and the difference is never below 0.
 */
export function desiredHealthy(rule: PdbRule, replicas: number): number {
  if (rule.minAvailable !== undefined) return rule.minAvailable;
  return Math.max(0, replicas - (rule.maxUnavailable ?? 0));
}

const readiness = (pod: DayPod): string => {
  const ready = (pod.status?.conditions ?? []).find((c) => c.type === 'Ready')?.status === 'True';
  const state = `${pod.status?.phase ?? 'no phase'}${ready ? ' Ready' : ' not Ready'}`;
  return pod.metadata.deletionTimestamp ? `${state} terminating` : state;
};

/** The pod's name without its set's prefix (the ReplicaSet hash and the pod's own suffix). */
const shortName = (name: string, set: string): string =>
  name.startsWith(`${set}-`) ? name.slice(set.length + 1) : name;

const statusLine = (status: PdbStatusVersion): string =>
  `disruptionsAllowed ${status.disruptionsAllowed}, currentHealthy ${status.currentHealthy}, ` +
  `desiredHealthy ${status.desiredHealthy}, expectedPods ${status.expectedPods}, ` +
  `observedGeneration ${status.observedGeneration ?? '?'} of ${status.generation ?? '?'}, ` +
  `disruptedPods [${status.disruptedPods.join(' ')}]`;

/** The PDB status just before the pod's eviction (see pdbStatusEvidence) allowed a disruption. */
function pdbStatusAllowed(
  statuses: readonly PdbStatusVersion[],
  set: string,
  pod: string,
  at: number,
): boolean {
  const then = statusBefore(statuses, set, pod, at);
  return then !== undefined && then.disruptionsAllowed >= 1;
}

function statusBefore(
  statuses: readonly PdbStatusVersion[],
  set: string,
  pod: string,
  at: number,
): PdbStatusVersion | undefined {
  const ofSet = statuses.filter((s) => s.set === set);
  const countedAt = ofSet.findIndex((s) => s.disruptedPods.includes(pod));
  const candidates = ofSet.filter(
    (s, i) => s.at <= at && (countedAt < 0 || i < countedAt) && !s.disruptedPods.includes(pod),
  );
  return candidates[candidates.length - 1];
}

/**
 * What the PDB's status said just before the pod's eviction (its last version seen by then that did not
 * yet name the pod among disruptedPods), and the first version that counted it.
 */
export function pdbStatusEvidence(
  statuses: readonly PdbStatusVersion[],
  set: string,
  pod: string,
  at: number,
): string {
  const ofSet = statuses.filter((s) => s.set === set);
  const countedAt = ofSet.findIndex((s) => s.disruptedPods.includes(pod));
  const then = statusBefore(statuses, set, pod, at);
  const counted = countedAt >= 0 ? ofSet[countedAt] : undefined;
  const parts = [
    then
      ? `PDB status then (${((at - then.at) / 1000).toFixed(1)} s before): ${statusLine(then)}`
      : 'no PDB status seen before it',
    counted
      ? `counted by: ${statusLine(counted)} (${((counted.at - at) / 1000).toFixed(1)} s after)`
      : 'no status named it among disruptedPods',
  ];
  return parts.join('; ');
}

export function checkPdbs(
  history: DayHistory,
  origin: number,
  /** The end time (CheckOptions.at): the teardown deletes the PDBs with the workloads, and is not judged. */
  until = Infinity,
): InvariantResult {
  const rules = new Map(history.pdbs.map((r) => [r.set, r]));
  const pods = new Map<string, DayPod>();
  const replicasAt = (set: string, at: number): number | undefined => {
    let found: number | undefined;
    for (const r of history.replicas) if (r.set === set && r.at <= at) found = r.replicas;
    return found;
  };
  const violations: string[] = [];
  /** Pods that began terminating without an eviction: the ReplicaSet's deletions in a scale-down. */
  const deletedBySet = new Set<string>();
  let evictions = 0;
  let notReady = 0;
  let statusLagged = 0;
  let scaleUpLagged = 0;
  let tightest = Infinity;
  for (const { object, type, at } of history.pods) {
    if (at > until) break;
    const name = object.metadata.name;
    const before = pods.get(name);
    if (type === 'DELETED') pods.delete(name);
    else pods.set(name, object);
    const set = object.metadata.labels?.app ?? '';
    const rule = rules.get(set);
    const startsTerminating =
      Boolean(object.metadata.deletionTimestamp) && !before?.metadata.deletionTimestamp;
    if (type === 'DELETED') deletedBySet.delete(name);
    if (!startsTerminating) continue;
    if (!evictedByEvictionApi(object)) {
      deletedBySet.add(name);
      continue;
    }
    if (!rule || !before || !healthy(before)) continue;
    if (notReadyBeforeEviction(object)) {
      notReady += 1;
      continue;
    }
    evictions += 1;
    const desired = desiredHealthy(rule, replicasAt(set, at) ?? 0);
    const left = [...pods.values()].filter((p) => p.metadata.labels?.app === set && healthy(p)).length;
    // Kubernetes' own race: the Eviction API judges by the PDB's status, and the disruption controller
    // had not yet counted pods the ReplicaSet had just begun deleting in a scale-down. Not judged when
    // the status before allowed this eviction and those deletions make up the difference.
    const scaleDeletions = [...pods.values()].filter(
      (p) => p.metadata.labels?.app === set && deletedBySet.has(p.metadata.name),
    ).length;
    if (
      left < desired &&
      left + scaleDeletions >= desired &&
      pdbStatusAllowed(history.pdbStatuses, set, name, at)
    ) {
      statusLagged += 1;
      continue;
    }
    // The same race after a scale-up: the status before counted fewer pods than the Deployment had just
    // been scaled to (its desiredHealthy not yet raised), allowed this eviction, and by its own count the
    // eviction left enough.
    const then = statusBefore(history.pdbStatuses, set, name, at);
    if (
      left < desired &&
      then !== undefined &&
      then.disruptionsAllowed >= 1 &&
      then.expectedPods < (replicasAt(set, at) ?? 0) &&
      left >= then.desiredHealthy
    ) {
      scaleUpLagged += 1;
      continue;
    }
    tightest = Math.min(tightest, left - desired);
    if (left < desired) {
      const podsThen = [...pods.values()]
        .filter((p) => p.metadata.labels?.app === set)
        .map((p) => `${shortName(p.metadata.name, set)} ${readiness(p.metadata.name === name ? before : p)}`);
      violations.push(
        `${secondsAfter(at, origin)}: ${name} evicted leaving ${left} healthy ${set} pods, PDB wants ${desired}` +
          ` (${pdbStatusEvidence(history.pdbStatuses, set, name, at)}; pods then: ${podsThen.join(', ')})`,
      );
    }
  }
  return result(
    'no PodDisruptionBudget breached',
    violations,
    (evictions === 0
      ? 'no eviction of a PDB-protected pod'
      : `${evictions} evictions of PDB-protected pods; the tightest left ${tightest} above the PDB`) +
      (notReady > 0 ? `; ${notReady} more of pods already not Ready when evicted (not judged)` : '') +
      (statusLagged > 0
        ? `; ${statusLagged} allowed by a PDB status that had not yet counted a scale-down's deletions (Kubernetes' race, not judged)`
        : '') +
      (scaleUpLagged > 0
        ? `; ${scaleUpLagged} allowed by a PDB status that had not yet counted a scale-up (Kubernetes' race, not judged)`
        : ''),
  );
}
