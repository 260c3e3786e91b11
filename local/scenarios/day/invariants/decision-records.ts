// Every decision a user would ask "why" about has a record that answers it: a pod the scheduler held
// Unschedulable for longer than WAITED_MS (apart from time the cluster could not act) is named by some
// provisioning window's record (placed on a NodeClaim being launched, or excluded with a cause per
// NodePool), and every disruption of the day has a disruption record whose command names the NodeClaim,
// with its reason, its $/h before and after and the pods it moved. Pure: the records are read from the
// table once the day has settled and handed in with the history.
//
// From when the scheduler said Unschedulable to when the pod was bound, as Karpenter counts a pod as its
// to provision only from then: a pod the scheduler bound at once to a node still starting, or one still
// in the scheduler's queue (after an API server outage, its backlog), has nothing for provisioning to
// explain.
import type {
  CommandDecision,
  DecisionRecord,
  ProvisioningRecord,
} from '../../../../shared/decisions/explain/decision-record.js';
import type { Disruption } from '../figures.js';
import { disturbedDuring, result, type DayHistory, type DayPod, type InvariantResult } from './history.js';

/** How long a pod may wait unbound before the records must say why. */
export const WAITED_MS = 30_000;

export interface DecisionRecordFigures {
  /** Pods Unschedulable for longer than WAITED_MS (outages apart), and how many of them a record names. */
  podsWaited: number;
  podsWaitedWithRecord: number;
  /** Of those, the ones whose newest record excluded them, by the first cause of the first NodePool. */
  causes: Record<string, number>;
  disruptions: number;
  disruptionsWithRecord: number;
  provisioningRecords: number;
  disruptionRecords: number;
}

const unschedulable = (pod: DayPod): boolean =>
  !pod.spec?.nodeName &&
  !pod.status?.nominatedNodeName &&
  (pod.status?.conditions ?? []).some(
    (c) => c.type === 'PodScheduled' && c.status === 'False' && c.reason === 'Unschedulable',
  );

/** From first seen Unschedulable to bound (or deleted, or the end), per pod name. */
function unschedulableSpans(history: DayHistory, endAt: number): Map<string, { from: number; to: number }> {
  const spans = new Map<string, { from: number; to: number; over: boolean }>();
  for (const { object, at } of history.pods) {
    if (object.metadata.labels?.app === history.daemonSet) continue;
    const name = object.metadata.name;
    let span = spans.get(name);
    if (!span) {
      if (!unschedulable(object)) continue;
      spans.set(name, (span = { from: at, to: endAt, over: false }));
    }
    if (span.over) continue;
    if (object.spec?.nodeName || object.metadata.deletionTimestamp) {
      span.to = at;
      span.over = true;
    }
  }
  return new Map([...spans].map(([name, { from, to }]) => [name, { from, to }]));
}

const podName = (qualified: string): string => qualified.slice(qualified.indexOf('/') + 1);

export function checkDecisionRecords(
  history: DayHistory,
  records: readonly DecisionRecord[],
  disruptions: readonly Disruption[],
  endAt: number,
): { invariant: InvariantResult; figures: DecisionRecordFigures } {
  const windows = records.filter((r): r is ProvisioningRecord => r.kind === 'provisioning');
  // Newest record first, per pod name (records come newest first; keep the first seen).
  const newest = new Map<string, { excludedBy?: string; placed: boolean }>();
  for (const window of windows) {
    for (const pod of window.pods) {
      const name = podName(pod.pod);
      if (newest.has(name)) continue;
      newest.set(name, {
        placed: pod.placed !== undefined,
        ...(pod.excluded?.[0] ? { excludedBy: pod.excluded[0].cause } : {}),
      });
    }
    for (const launch of window.launches)
      for (const pod of launch.pods)
        if (!newest.has(podName(pod))) newest.set(podName(pod), { placed: true });
  }
  const commands = new Map<string, CommandDecision>();
  for (const record of records) {
    if (record.kind !== 'disruption') continue;
    for (const command of record.commands)
      for (const candidate of command.candidates)
        if (!commands.has(candidate)) commands.set(candidate, command);
  }

  const violations: string[] = [];
  const causes: Record<string, number> = {};
  let podsWaited = 0;
  let podsWaitedWithRecord = 0;
  for (const [name, { from, to }] of unschedulableSpans(history, endAt)) {
    if (to - from - disturbedDuring(history, from, to) <= WAITED_MS) continue;
    podsWaited += 1;
    const record = newest.get(name);
    if (!record) {
      // What a reader needs to tell a lost record from a window that never ran.
      const during = windows.filter((w) => {
        const at = Date.parse(w.at);
        return at >= from && at <= to;
      }).length;
      violations.push(
        `${name} was Unschedulable ${((to - from) / 1000).toFixed(1)} s (from ${new Date(from).toISOString()}) and no record names it; ${during} window(s) recorded meanwhile`,
      );
      continue;
    }
    podsWaitedWithRecord += 1;
    const cause = record.excludedBy ?? (record.placed ? 'Placed' : 'Unknown');
    causes[cause] = (causes[cause] ?? 0) + 1;
  }
  let disruptionsWithRecord = 0;
  for (const disruption of disruptions) {
    const command = commands.get(disruption.name);
    if (!command) {
      violations.push(`${disruption.name} (${disruption.reason}) has no disruption record naming it`);
      continue;
    }
    const complete =
      command.reason !== '' &&
      Number.isFinite(command.pricePerHourBefore) &&
      Number.isFinite(command.pricePerHourAfter) &&
      Array.isArray(command.podsMoved);
    if (!complete) {
      violations.push(
        `${disruption.name}'s record lacks its reason, $/h or pods: ${JSON.stringify(command)}`,
      );
      continue;
    }
    disruptionsWithRecord += 1;
  }
  const figures: DecisionRecordFigures = {
    podsWaited,
    podsWaitedWithRecord,
    causes,
    disruptions: disruptions.length,
    disruptionsWithRecord,
    provisioningRecords: windows.length,
    disruptionRecords: records.length - windows.length,
  };
  return {
    figures,
    invariant: result(
      `every pod Unschedulable over ${WAITED_MS / 1000} s and every disruption has a decision record saying why`,
      violations,
      `${podsWaitedWithRecord}/${podsWaited} waiting pods and ${disruptionsWithRecord}/${disruptions.length} disruptions recorded`,
    ),
  };
}
