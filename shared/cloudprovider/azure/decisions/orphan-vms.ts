// Orphan VMs: tagged for this cluster and a NodeClaim, but the NodeClaim no longer exists. Only VMs old
// enough are collected, so a VM whose NodeClaim the caller has not seen yet (a list taken a moment
// before the launch wrote it) is never mistaken for an orphan.
import { VmTags } from './vm-spec.js';

export interface TaggedVm {
  name: string;
  tags?: Readonly<Record<string, string>>;
  /** RFC 3339, or a Date as the SDK returns it. */
  timeCreated?: string | Date;
  provisioningState?: string;
}

export interface OrphanCandidate {
  vmName: string;
  nodeClaim: string;
}

export function orphanVmCandidates(input: {
  vms: readonly TaggedVm[];
  clusterName: string;
  knownNodeClaims: ReadonlySet<string>;
  now: Date;
  graceMs: number;
}): OrphanCandidate[] {
  return input.vms.flatMap((vm) => {
    const tags = vm.tags ?? {};
    const nodeClaim = tags[VmTags.nodeClaim];
    if (tags[VmTags.cluster] !== input.clusterName || !nodeClaim) return [];
    if (input.knownNodeClaims.has(nodeClaim)) return [];
    if (vm.provisioningState === 'Deleting') return [];
    const created = vm.timeCreated === undefined ? NaN : new Date(vm.timeCreated).getTime();
    // Without a creation time the VM's age is unknown: leave it rather than risk a live node.
    if (Number.isNaN(created) || input.now.getTime() - created < input.graceMs) return [];
    return [{ vmName: vm.name, nodeClaim }];
  });
}
