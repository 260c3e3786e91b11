// CapacityBuffer status (gate CapacityBuffer), upstream's buffer controller run from the sweep: each
// buffer's reference resolved, its replicas and ReadyForProvisioning written where they changed. Then the
// provisioning batcher is signalled when a buffer needs a window, since no pod event will signal one:
// - a status was written (a new or changed buffer),
// - a ready buffer's Provisioning is not True (its capacity is being launched, or a window has yet to see
//   that it has arrived), or
// - its virtual pods no longer fit on the Ready Nodes (real pods took the room: a burst landed on the
//   warm node), which is when the buffer is refilled.
// Upstream requeues each buffer every 30 s for the same reason; checking the room each sweep refills a
// consumed buffer one sweep period after the burst instead. A sweep confined to some NodeClaims by a label
// selector owns the buffers whose pod template carries those labels, as a confined provisioning window
// owns those pods.
import {
  CapacityBufferConditionTypes,
  isBufferReadyForProvisioning,
} from '../../../decisions/capacity-buffers.js';
import { isConditionTrue } from '../../../decisions/conditions.js';
import type { ConsolidationPod } from '../../../decisions/consolidation/pods.js';
import { bufferRoom } from '../../capacity-buffers/capacity-buffer-room.js';
import {
  buffersSelectedBy,
  bufferVirtualPods,
  readCapacityBuffers,
  writeCapacityBufferStatus,
} from '../../capacity-buffers/capacity-buffers.js';
import { signalProvisioning } from '../../provisioning/signal.js';
import type { StepReport, SweepStep } from '../../sweep-step/sweep-step.js';

export const capacityBuffersStep: SweepStep = {
  name: 'capacity-buffers',
  async run(context) {
    const report: StepReport = { step: 'capacity-buffers', examined: 0, acted: 0, failed: 0 };
    const { deps } = context;
    try {
      const read = await readCapacityBuffers(deps);
      if (!read) return report;
      const entries = buffersSelectedBy(read, context.nodeClaimSelector);
      if (entries.length === 0) return report;
      report.examined = entries.length;
      for (const { buffer, status } of entries) {
        if (await writeCapacityBufferStatus(deps, buffer, status)) report.acted += 1;
      }
      const virtual = bufferVirtualPods(entries);
      if (virtual.pods.length === 0) return report;
      const awaitingCapacity = entries.some(
        ({ buffer, status }) =>
          isBufferReadyForProvisioning({ ...buffer, status }) &&
          !isConditionTrue(status.conditions, CapacityBufferConditionTypes.provisioning),
      );
      let unplaced = 0;
      if (report.acted === 0 && !awaitingCapacity) {
        const { pods } = await deps.cluster.workloads();
        unplaced = bufferRoom(
          virtual,
          context.view.snapshot.nodes,
          podsByNode(pods),
          deps.settings.scheduling,
        ).unplaced;
      }
      if (report.acted > 0 || awaitingCapacity || unplaced > 0) {
        context.log.debug('capacity buffers need a provisioning window', {
          written: report.acted,
          awaitingCapacity,
          unplaced,
        });
        await signalProvisioning(context.orchestrations, deps.settings.provisioning, deps.now());
      }
      return report;
    } catch (error) {
      context.log.warn('sweep step failed', { step: report.step, error });
      return { ...report, failed: 1 };
    }
  },
};

function podsByNode(pods: readonly ConsolidationPod[]): Map<string, ConsolidationPod[]> {
  const byNode = new Map<string, ConsolidationPod[]>();
  for (const pod of pods) {
    if (!pod.nodeName) continue;
    const list = byNode.get(pod.nodeName);
    if (list) list.push(pod);
    else byNode.set(pod.nodeName, [pod]);
  }
  return byNode;
}
