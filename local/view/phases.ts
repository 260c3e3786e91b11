// A NodeClaim's phase, read from its conditions, and the phases over time as segments for the timeline.
// Pure functions of what the recorder saw.
import { findCondition } from '../../shared/decisions/conditions.js';
import { ConditionTypes, type NodeClaim } from '../../shared/models/index.js';
import type { Observed } from './recorder.js';

export type Phase =
  | 'Pending'
  | 'Launching'
  | 'Launched'
  | 'Registered'
  | 'Initialized'
  | 'LaunchFailed'
  | 'Disrupting'
  | 'Terminating';

export const phaseOrder: readonly Phase[] = [
  'Pending',
  'Launching',
  'Launched',
  'Registered',
  'Initialized',
  'Disrupting',
  'LaunchFailed',
  'Terminating',
];

/** What a phase means, for legends. */
export const phaseMeaning: Record<Phase, string> = {
  Pending: 'created, no VM yet',
  Launching: 'VM PUT accepted, LRO running',
  Launched: 'VM running, no Node yet',
  Registered: 'Node synced and untainted',
  Initialized: 'Node ready, startup taints gone',
  Disrupting: 'marked for disruption (DisruptionReason: Expired, Drifted, Empty, Underutilized, …)',
  LaunchFailed: 'Launched=False',
  Terminating: 'deleting: drain, VM, Node',
};

export function nodeClaimPhase(nodeClaim: NodeClaim): Phase {
  const conditions = nodeClaim.status?.conditions;
  if (nodeClaim.metadata.deletionTimestamp) {
    return findCondition(conditions, ConditionTypes.launched)?.status === 'False'
      ? 'LaunchFailed'
      : 'Terminating';
  }
  if (findCondition(conditions, ConditionTypes.launched)?.status === 'False') return 'LaunchFailed';
  if (findCondition(conditions, 'DisruptionReason') || findCondition(conditions, 'Disrupting'))
    return 'Disrupting';
  if (findCondition(conditions, ConditionTypes.initialized)?.status === 'True') return 'Initialized';
  if (findCondition(conditions, ConditionTypes.registered)?.status === 'True') return 'Registered';
  if (findCondition(conditions, ConditionTypes.launched)?.status === 'True') return 'Launched';
  if (nodeClaim.status?.providerID) return 'Launching';
  return 'Pending';
}

export interface PhaseSegment {
  phase: Phase;
  from: number;
  to: number;
}

export interface NodeClaimTimeline {
  name: string;
  segments: PhaseSegment[];
  /** When the NodeClaim was gone, if it was. */
  goneAt?: number;
  /** The offering it got (instance type / zone), if it got one. */
  offering?: string;
  /** Launched=False reason, if any. */
  failureReason?: string;
}

/** One timeline per NodeClaim, in order of first appearance; open segments end at `end`. */
export function nodeClaimTimelines(
  history: readonly Observed<NodeClaim>[],
  end: number,
): NodeClaimTimeline[] {
  const byName = new Map<string, NodeClaimTimeline>();
  for (const observation of history) {
    const name = observation.object.metadata.name;
    let timeline = byName.get(name);
    if (!timeline) {
      timeline = { name, segments: [] };
      byName.set(name, timeline);
    }
    const labels = observation.object.metadata.labels;
    const type = labels?.['node.kubernetes.io/instance-type'];
    const zone = labels?.['topology.kubernetes.io/zone'];
    if (type && zone) timeline.offering = `${type} ${zone}`;
    const launched = findCondition(observation.object.status?.conditions, ConditionTypes.launched);
    if (launched?.status === 'False') timeline.failureReason = launched.reason;
    const last = timeline.segments.at(-1);
    if (observation.type === 'DELETED') {
      if (last) last.to = observation.at;
      timeline.goneAt = observation.at;
      continue;
    }
    const phase = nodeClaimPhase(observation.object);
    if (last?.phase === phase) continue;
    if (last) last.to = observation.at;
    timeline.segments.push({ phase, from: observation.at, to: end });
  }
  return [...byName.values()];
}

/** When a NodeClaim first reached a phase, if it did. */
export function firstTimeIn(timeline: NodeClaimTimeline, phase: Phase): number | undefined {
  return timeline.segments.find((segment) => segment.phase === phase)?.from;
}
