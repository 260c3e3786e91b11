// CapacityBuffers in a provisioning window (upstream's provisioning/buffers.go): every ready buffer's
// virtual pods join the solve beside the pending pods, so spare capacity is launched like capacity for any
// pod and kept from then on; after the solve each buffer's Provisioning condition says whether its pods
// fit on existing capacity (True) or needed new NodeClaims (False). Virtual pods get no events (no pod
// exists to carry them) and never count as pods the window nominated or could not schedule.
import {
  bufferKey,
  classifyBufferPods,
  provisioningCondition,
  type VirtualPods,
} from '../../decisions/capacity-buffers.js';
import type { SchedulingPod, SchedulingResult } from '../../decisions/scheduling/index.js';
import {
  buffersSelectedBy,
  bufferVirtualPods,
  readCapacityBuffers,
  writeCapacityBufferStatus,
  type ResolvedBuffer,
} from '../capacity-buffers/capacity-buffers.js';
import type { LifecycleDependencies } from '../dependencies.js';

export interface WindowBuffers {
  entries: ResolvedBuffer[];
  virtual: VirtualPods;
}

/**
 * The buffers and their virtual pods for this window, undefined with the gate off. With a provisioning
 * selector (a sharded app) only the buffers whose template labels it selects, as for real pods.
 */
export async function windowBuffers(
  deps: Pick<LifecycleDependencies, 'capacityBuffers' | 'settings' | 'now'>,
): Promise<WindowBuffers | undefined> {
  const read = await readCapacityBuffers(deps);
  if (!read) return undefined;
  const entries = buffersSelectedBy(read, deps.settings.provisioning.selector);
  if (entries.length === 0) return undefined;
  return { entries, virtual: bufferVirtualPods(entries) };
}

export function isVirtualPod(buffers: WindowBuffers | undefined, pod: { uid: string }): boolean {
  return buffers?.virtual.bufferOf.has(pod.uid) ?? false;
}

/** The solve's pods: the pending ones first, then the buffers' (real pods win ties for room). */
export function withVirtualPods(pods: SchedulingPod[], buffers: WindowBuffers | undefined): SchedulingPod[] {
  return buffers ? [...pods, ...buffers.virtual.pods] : pods;
}

/** The solve's result without the virtual pods, for the events and the report. */
export function realPodsOnly(result: SchedulingResult, buffers: WindowBuffers | undefined): SchedulingResult {
  if (!buffers) return result;
  const real = <T extends { uid: string }>(pod: T) => !isVirtualPod(buffers, pod);
  return {
    newNodeClaims: result.newNodeClaims.map((claim) => ({ ...claim, pods: claim.pods.filter(real) })),
    existingPlacements: result.existingPlacements.filter((p) => real(p.pod)),
    unschedulable: result.unschedulable.filter((u) => real(u.pod)),
  };
}

/**
 * Writes each buffer's status as it should be now (ReadyForProvisioning and replicas too, so a window
 * that ran before the sweep saw a new buffer leaves it consistent) with Provisioning from this solve.
 * Returns how many buffers were written.
 */
export async function recordBufferProvisioning(
  deps: Pick<LifecycleDependencies, 'capacityBuffers' | 'now'>,
  buffers: WindowBuffers,
  result: SchedulingResult,
): Promise<number> {
  const placements = classifyBufferPods(result, buffers.virtual.bufferOf);
  const now = deps.now();
  let written = 0;
  await Promise.all(
    buffers.entries.map(async ({ buffer, status }) => {
      const current = { ...buffer, status };
      const conditions = provisioningCondition(current, placements.get(bufferKey(buffer)), now);
      const next = conditions ? { ...status, conditions } : status;
      if (await writeCapacityBufferStatus(deps, buffer, next)) written += 1;
    }),
  );
  return written;
}
