// Garbage collection of orphan VMs: VMs tagged for this cluster whose NodeClaim no longer exists (a
// termination that lost its state, a NodeClaim whose finalizer was removed by hand, a launch whose
// NodeClaim vanished mid-PUT) are deleted once past a grace period, each one logged. It runs on its own
// timer rather than in the lifecycle sweep: List VMs is limited to 300 calls a minute per subscription
// and region, and the sweep may run every few seconds. Every candidate is confirmed with a GET of its
// NodeClaim just before its VM is deleted, so a NodeClaim created after the list is never orphaned.
import type { OrphanInstance } from '../../cloudprovider/types.js';
import type { LifecycleDependencies } from '../dependencies.js';

export interface GarbageCollectionResult {
  vms: number;
  deleted: OrphanInstance[];
}

export async function collectOrphanVms(
  deps: Pick<LifecycleDependencies, 'cloud' | 'objects' | 'settings' | 'now' | 'log'>,
): Promise<GarbageCollectionResult> {
  const settings = deps.settings.disruption;
  const [vms, nodeClaims] = await Promise.all([deps.cloud.list(), deps.objects.nodeClaims.list()]);
  const candidates = deps.cloud.orphanInstances(vms, {
    knownNodeClaims: new Set(nodeClaims.map((c) => c.metadata.name)),
    now: deps.now(),
    graceMs: settings.orphanVmGraceMinutes * 60_000,
  });
  const deleted: OrphanInstance[] = [];
  for (const candidate of candidates) {
    if (await deps.objects.nodeClaims.get(candidate.nodeClaim)) continue;
    const vm = vms.find((v) => v.name === candidate.vmName);
    await deps.cloud.delete(vm ?? candidate.vmName);
    deleted.push(candidate);
    deps.log.warn('orphan VM deleted: its NodeClaim no longer exists', { ...candidate });
  }
  deps.log.info('orphan VM collection finished', { vms: vms.length, deleted: deleted.length });
  return { vms: vms.length, deleted };
}
