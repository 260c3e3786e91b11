// The record of one provisioning window, built from the solve's result and the NodeClaims the window
// made of it, so `explain` can answer afterwards where each pod was planned, or per NodePool why none
// took it, and what each launch was for. Pure: the lifecycle builds it and hands it to the store.
import { WellKnown } from '../../models/karpenter.js';
import type { NewNodeClaim, PodReference, SchedulingResult } from '../scheduling/types.js';
import {
  MAX_RECORD_SUBJECTS,
  type LaunchDecision,
  type PodDecision,
  type ProvisioningRecord,
} from './decision-record.js';

/** A launch lists this many of its cheapest instance types: enough to read, the rest are on the NodeClaim. */
export const RECORD_INSTANCE_TYPES = 5;

export interface ProvisioningRecordInput {
  windowId: string;
  /** When the window was solved. */
  at: Date;
  /** The solve's result over real pods only (no CapacityBuffer's virtual pods). */
  result: SchedulingResult;
  /**
   * Per new NodeClaim of `result` (same index), the name of the NodeClaim the window created for it (or
   * found already created by an earlier run of the window); undefined when none was made.
   */
  nodeClaimNames: readonly (string | undefined)[];
  /** At most this many pods are listed (MAX_RECORD_SUBJECTS unless a caller needs fewer). */
  maxPods?: number;
}

export function provisioningRecord(input: ProvisioningRecordInput): ProvisioningRecord {
  const { result } = input;
  const pods: PodDecision[] = [];
  // Pods placed nowhere come first: they are what a user asks about, and a bounded record keeps them.
  for (const unschedulable of result.unschedulable) {
    pods.push({
      ...subject(unschedulable.pod),
      excluded: unschedulable.causes,
      ...(unschedulable.existingNodesFull !== undefined && {
        existingNodesFull: unschedulable.existingNodesFull,
      }),
    });
  }
  const launches: LaunchDecision[] = [];
  result.newNodeClaims.forEach((claim, index) => {
    const name = input.nodeClaimNames[index];
    if (name === undefined) return;
    launches.push(launchOf(name, claim));
    for (const pod of claim.pods)
      pods.push({ ...subject(pod), placed: { kind: 'NodeClaim', name, new: true } });
  });
  for (const placement of result.existingPlacements) {
    pods.push({
      ...subject(placement.pod),
      placed: { kind: placement.kind, name: placement.nodeName, new: false },
    });
  }
  const max = Math.min(input.maxPods ?? MAX_RECORD_SUBJECTS, MAX_RECORD_SUBJECTS);
  const omitted = Math.max(0, pods.length - max);
  return {
    kind: 'provisioning',
    id: input.windowId,
    at: input.at.toISOString(),
    pods: omitted > 0 ? pods.slice(0, max) : pods,
    launches,
    ...(omitted > 0 && { omittedPods: omitted }),
  };
}

function subject(pod: PodReference): Pick<PodDecision, 'pod' | 'uid'> {
  return { pod: podName(pod), uid: pod.uid };
}

function podName(pod: PodReference): string {
  return `${pod.namespace}/${pod.name}`;
}

function launchOf(nodeClaim: string, claim: NewNodeClaim): LaunchDecision {
  const zones = valuesIn(claim, WellKnown.zoneLabel);
  const capacityTypes = valuesIn(claim, WellKnown.capacityTypeLabel);
  return {
    nodeClaim,
    nodePool: claim.nodePoolName,
    // The solve lists them cheapest first already.
    instanceTypes: claim.instanceTypeNames.slice(0, RECORD_INSTANCE_TYPES),
    ...(zones && { zones }),
    ...(capacityTypes && { capacityTypes }),
    pricePerHour: claim.cheapestPrice,
    pods: claim.pods.map(podName),
    ...(claim.minValuesRelaxed && { minValuesRelaxed: true as const }),
  };
}

/** The values an `In` requirement on the key narrows the NodeClaim to, sorted; undefined when not narrowed. */
function valuesIn(claim: NewNodeClaim, key: string): string[] | undefined {
  const requirement = claim.requirements.find((r) => r.key === key && r.operator === 'In');
  return requirement?.values?.length ? [...requirement.values].sort() : undefined;
}
