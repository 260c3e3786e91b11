// One provisioning window's work (the activity the batcher calls when a window closes): read the
// cluster, solve over every provisionable pod, create a NodeClaim for each new NodeClaim of the result,
// and tell each pod that fits nowhere why. Launch follows through the NodeClaim's own event, as for any
// other NodeClaim.
//
// Idempotent: NodeClaim names derive from the window and the pods (provisioned-nodeclaim.ts), so a
// replay of this activity, or a second run of the same window, gets AlreadyExists instead of a second
// NodeClaim; and a later window sees the earlier NodeClaims in flight and places their pods there.
//
// CapacityBuffers' virtual pods (gate CapacityBuffer) join the solve, so their spare capacity is launched
// and kept like any pod's; they get no events, and each buffer's Provisioning condition is written from
// where the solve put them (buffers.ts).
import { solve, type PodReference, type SchedulingResult } from '../../decisions/scheduling/index.js';
import { provisionedNodeClaim } from '../../decisions/provisioned-nodeclaim.js';
import { provisioningRecord } from '../../decisions/explain/provisioning-record.js';
import { isAlreadyExists } from '../../kube/errors.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { realPodsOnly, recordBufferProvisioning, windowBuffers, withVirtualPods } from './buffers.js';
import { readProvisioningState, type ProvisioningReadTimings } from './cluster-state.js';
import { writeDecisionRecord } from '../decision-records/record-writes.js';
import { solveInput } from './solve-input.js';
import { instanceTypeCatalog } from './instance-type-catalog.js';

/** What a window did; the batcher keeps it as its custom status. */
export interface ProvisioningReport {
  windowId: string;
  pods: number;
  /** NodeClaims this run created (AlreadyExists ones are counted in `alreadyCreated`). */
  created: string[];
  alreadyCreated: number;
  /** Pods placed on existing Nodes or in-flight NodeClaims. */
  onExisting: number;
  /** CapacityBuffers' virtual pods in the solve (not counted in `pods`). */
  bufferPods: number;
  unschedulable: number;
  /** Sum of the new NodeClaims' cheapest offering prices, USD/h (Infinity when a price is unknown). */
  launchPricePerHour: number;
  solveMs: number;
  /** Whether the window's decision record (where each pod went or why not) reached the store. */
  recorded: boolean;
}

/** Karpenter's event reasons (KS pkg/controllers/provisioning/scheduling/events.go). */
export const ProvisioningEvents = {
  failedScheduling: 'FailedScheduling',
  nominated: 'Nominated',
} as const;

export async function provisionPendingPods(
  deps: LifecycleDependencies,
  windowId: string,
): Promise<ProvisioningReport> {
  const log = deps.log.with({ windowId });
  // Where the window's time went, for its log line: at a thousand nodes the window, not the wait between
  // signals, paces a burst's launches.
  const reads: ProvisioningReadTimings = { cluster: 0, pods: 0, fromCache: [] };
  const clock = partClock();
  const state = await readProvisioningState(deps, reads);
  const solvedAt = deps.now();
  // The region's current price book (the shipped table until the Retail Prices API has answered) is the
  // one launch orders offerings by, so the cheapest instance type listed here is the one launch tries first.
  const [catalog, buffers] = await Promise.all([instanceTypeCatalog(deps, state), windowBuffers(deps)]);
  const readMs = clock.lap();
  const selector = deps.settings.provisioning.selector;
  const pendingInput = solveInput(state, {
    ...(selector && { selector }),
    policies: deps.settings.scheduling,
    ...(catalog.overlaid && { overlaid: catalog.overlaid }),
    instanceTypesFor: catalog.forClass,
  });
  const input = { ...pendingInput, pods: withVirtualPods(pendingInput.pods, buffers) };
  const started = performance.now();
  const solved = input.pods.length === 0 ? emptyResult() : solve(input);
  const solveMs = performance.now() - started;
  clock.lap();
  // The NodeClaims are created for every pod the solve placed, virtual or not; the events and counts
  // below are about real pods only.
  const result = realPodsOnly(solved, buffers);

  const nominate = (pod: PodReference, target: string) =>
    deps.events.normal(
      { apiVersion: 'v1', kind: 'Pod', ...pod },
      ProvisioningEvents.nominated,
      `Pod should schedule on: ${target}`,
    );
  const nodePools = new Map(state.nodePools.map((p) => [p.metadata.name, p]));
  const nodeClasses = new Map(state.nodeClasses.map((c) => [c.metadata.name, c]));
  const created: string[] = [];
  const nodeClaimNames: (string | undefined)[] = solved.newNodeClaims.map(() => undefined);
  let alreadyCreated = 0;
  await Promise.all(
    solved.newNodeClaims.map(async (claim, index) => {
      const realPods = result.newNodeClaims[index]?.pods ?? [];
      const nodePool = nodePools.get(claim.nodePoolName);
      if (!nodePool) return;
      const nodeClass = nodeClasses.get(nodePool.spec.template.spec.nodeClassRef.name);
      const nodeClaim = provisionedNodeClaim({ windowId, claim, nodePool, nodeClass });
      nodeClaimNames[index] = nodeClaim.metadata.name;
      try {
        await deps.objects.nodeClaims.create(nodeClaim);
        created.push(nodeClaim.metadata.name);
        deps.metrics.increment('karpenter_nodeclaims_created_total', {
          nodepool: claim.nodePoolName,
          reason: 'provisioning',
          min_values_relaxed: claim.minValuesRelaxed ? 'true' : 'false',
        });
      } catch (error) {
        if (!isAlreadyExists(error)) throw error;
        alreadyCreated += 1;
        return;
      }
      await Promise.all(realPods.map((pod) => nominate(pod, `nodeclaim/${nodeClaim.metadata.name}`)));
    }),
  );
  const createMs = clock.lap();
  // As Karpenter, a pod placed on an existing Node or an in-flight NodeClaim is nominated too, so `kubectl
  // describe pod` says where the simulation planned it (at a bounded rate: EVENT_REASON_LIMITS; the
  // window's decision record keeps every placement).
  await Promise.all(
    result.existingPlacements.map(({ pod, nodeName, kind }) =>
      nominate(pod, `${kind === 'Node' ? 'node' : 'nodeclaim'}/${nodeName}`),
    ),
  );
  await Promise.all(
    result.unschedulable.map(({ pod, reason }) =>
      deps.events.warning(
        { apiVersion: 'v1', kind: 'Pod', ...pod },
        ProvisioningEvents.failedScheduling,
        `Failed to schedule pod, ${reason}`,
      ),
    ),
  );

  const eventsMs = clock.lap();
  if (buffers) await recordBufferProvisioning(deps, buffers, solved);

  const record = provisioningRecord({ windowId, at: solvedAt, result, nodeClaimNames });
  const report: ProvisioningReport = {
    windowId,
    pods: pendingInput.pods.length,
    created: created.sort(),
    alreadyCreated,
    onExisting: result.existingPlacements.length,
    bufferPods: input.pods.length - pendingInput.pods.length,
    unschedulable: result.unschedulable.length,
    launchPricePerHour: solved.newNodeClaims.reduce((sum, claim) => sum + claim.cheapestPrice, 0),
    solveMs: Math.round(solveMs),
    // Written, not returned: the report is the batcher's custom status, kept in its Durable history,
    // where a record of hundreds of pods would cost every replay.
    recorded: await writeDecisionRecord(deps, record),
  };
  const { fromCache, ...readsMs } = reads;
  const partsMs = { ...readsMs, read: readMs, create: createMs, events: eventsMs, record: clock.lap() };
  log.info('provisioning window solved', { ...report, partsMs, fromCache });
  deps.metrics.observe('karpenter_scheduler_scheduling_duration_seconds', solveMs / 1000, {});

  return report;
}

/** Milliseconds since the last lap (or the start), rounded. */
function partClock(): { lap(): number } {
  let last = performance.now();
  return {
    lap() {
      const now = performance.now();
      const ms = Math.round(now - last);
      last = now;
      return ms;
    },
  };
}

function emptyResult(): SchedulingResult {
  return { newNodeClaims: [], existingPlacements: [], unschedulable: [] };
}
