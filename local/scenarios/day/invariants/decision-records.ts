// Every decision a user would ask "why" about has a record that answers it: a pod left unbound for
// longer than WAITED_MS (apart from time the cluster could not act) is named by some provisioning
// window's record (placed on a NodeClaim being launched for it, or excluded with a cause per NodePool),
// and every disruption of the day has a disruption record whose command names the NodeClaim, with its
// reason, its $/h before and after and the pods it moved. Pure: the records are read from the table once
// the day has settled and handed in with the history.
//
// Unbound time, not time to Running: a pod the scheduler bound at once to a node still starting never
// enters a provisioning window, and there is nothing to explain about it but the node's boot.
import type {
  CommandDecision,
  DecisionRecord,
  ProvisioningRecord,
} from '../../../../shared/decisions/explain/decision-record.js';
import type { Disruption } from '../figures.js';
import { disturbedDuring, result, type DayHistory, type InvariantResult } from './history.js';

/** How long a pod may wait unbound before the records must say why. */
export const WAITED_MS = 30_000;

export interface DecisionRecordFigures {
  /** Pods unbound for longer than WAITED_MS (outages apart), and how many of them a record names. */
  podsWaited: number;
  podsWaitedWithRecord: number;
  /** Of those, the ones whose newest record excluded them, by the first cause of the first NodePool. */
  causes: Record<string, number>;
  disruptions: number;
  disruptionsWithRecord: number;
  provisioningRecords: number;
  disruptionRecords: number;
}

/** From first seen to first bound (or the end, or its deletion), per pod name. */
function unboundSpans(history: DayHistory, endAt: number): Map<string, { from: number; to: number }> {
  const spans = new Map<string, { from: number; to: number; bound: boolean }>();
  for (const { object, at } of history.pods) {
    if (object.metadata.labels?.app === history.daemonSet) continue;
    const name = object.metadata.name;
    let span = spans.get(name);
    if (!span) spans.set(name, (span = { from: at, to: endAt, bound: false }));
    if (span.bound) continue;
    if (object.spec?.nodeName || object.metadata.deletionTimestamp) {
      span.to = at;
      span.bound = true;
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
  for (const [name, { from, to }] of unboundSpans(history, endAt)) {
    if (to - from - disturbedDuring(history, from, to) <= WAITED_MS) continue;
    podsWaited += 1;
    const record = newest.get(name);
    if (!record) {
      violations.push(`${name} waited unbound ${((to - from) / 1000).toFixed(1)} s and no record names it`);
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
      `every pod unbound over ${WAITED_MS / 1000} s and every disruption has a decision record saying why`,
      violations,
      `${podsWaitedWithRecord}/${podsWaited} waiting pods and ${disruptionsWithRecord}/${disruptions.length} disruptions recorded`,
    ),
  };
}
