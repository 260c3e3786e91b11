// Whether a VM with a NodeClaim's VM name is that NodeClaim's: its tags must name this cluster and this
// NodeClaim (the tags launch writes, see vmSpec). The name alone proves nothing: anyone can create a VM
// called aks-…, and adopting it would hand it to a NodeClaim whose deletion then deletes it.
import { VmTags } from './vm-spec.js';

export type VmOwnership = { owned: true } | { owned: false; conflict: string };

export function vmOwnership(
  vm: { name?: string | undefined; tags?: Readonly<Record<string, string>> | undefined },
  owner: { clusterName: string; nodeClaimName: string },
): VmOwnership {
  const tags = vm.tags ?? {};
  const cluster = tags[VmTags.cluster];
  const nodeClaim = tags[VmTags.nodeClaim];
  if (cluster === owner.clusterName && nodeClaim === owner.nodeClaimName) return { owned: true };
  const seen = (value: string | undefined): string => (value === undefined ? 'no tag' : `"${value}"`);
  return {
    owned: false,
    conflict:
      `VM ${vm.name ?? ''} exists but is not this NodeClaim's: its tag ${VmTags.cluster} is ${seen(cluster)} ` +
      `(expected "${owner.clusterName}") and ${VmTags.nodeClaim} is ${seen(nodeClaim)} ` +
      `(expected "${owner.nodeClaimName}"); it is left untouched`,
  };
}
