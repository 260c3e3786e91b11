// What launch sends to Azure and writes on the NodeClaim for a chosen offering: the VM body with its
// rendered bootstrap data, the offering's labels, and the reverse mapping from an existing VM to the
// catalog offering it was created as. Pure functions of settings and objects; no I/O.
import type { VirtualMachine } from '@azure/arm-compute';
import type { Settings } from '../config/settings.js';
import {
  encodeCustomData,
  kubeletLabels,
  registrationTaints,
  renderBootstrap,
} from '../decisions/bootstrap.js';
import { kubeletReservationFlags, maxPodsFor, nodeReservations } from '../decisions/node-reservations.js';
import { offeringLabels, type CapacityOptions, type Offering } from '../decisions/offerings.js';
import { buildVirtualMachine, vmNameFor } from '../decisions/vm-spec.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../models/index.js';
import { WellKnown } from '../models/karpenter.js';

export function launchLabels(offering: Offering): Record<string, string> {
  const labels = offeringLabels(offering);
  return {
    [WellKnown.instanceTypeLabel]: offering.vmSize,
    [WellKnown.capacityTypeLabel]: offering.capacityType,
    ...(offering.zone ? { [WellKnown.zoneLabel]: offering.zone } : {}),
    ...Object.fromEntries(Object.entries(labels).filter(([key]) => key.startsWith('karpenter.azure.com/'))),
  };
}

export function vmBody(
  settings: Settings,
  nodeClaim: NodeClaim,
  offering: Offering,
  nodePool: NodePool | undefined,
  nodeClass: AKSNodeClass,
): VirtualMachine {
  const vmName = vmNameFor(nodeClaim.metadata.name);
  const nodeLabels = kubeletLabels({
    ...nodePool?.spec.template.metadata?.labels,
    ...nodeClaim.metadata.labels,
    ...offeringLabels(offering),
    ...(nodePool ? { [WellKnown.nodePoolLabel]: nodePool.metadata.name } : {}),
  });
  const bootstrap = renderBootstrap({
    clusterName: settings.clusterName,
    apiServerUrl: settings.bootstrap.apiServerUrl,
    caCertPem: settings.bootstrap.caCertPem,
    bootstrapToken: settings.bootstrap.token,
    nodeName: vmName,
    registerWithTaints: registrationTaints(nodeClaim),
    nodeLabels,
    ...(nodeClass.spec.kubelet ? { kubeletConfig: nodeClass.spec.kubelet } : {}),
    reservations: kubeletReservationFlags(nodeReservations(offering, capacityOptions(settings, nodeClass))),
  });
  return buildVirtualMachine({
    location: settings.azure.location,
    clusterName: settings.clusterName,
    nodePoolName: nodePool?.metadata.name ?? '',
    nodeClaimName: nodeClaim.metadata.name,
    offering,
    ...(nodeClass.spec.imageFamily ? { imageFamily: nodeClass.spec.imageFamily } : {}),
    ...(nodeClass.spec.osDiskSizeGB !== undefined ? { osDiskSizeGB: nodeClass.spec.osDiskSizeGB } : {}),
    subnetId: nodeClass.spec.vnetSubnetID ?? settings.azure.defaultSubnetId,
    customData: encodeCustomData(bootstrap),
    sshPublicKey: settings.azure.sshPublicKey,
    adminUsername: settings.azure.adminUsername,
    ...(nodeClass.spec.tags ? { extraTags: nodeClass.spec.tags } : {}),
  });
}

/** The catalog offering an existing VM was created as (size, zone, priority). */
export function offeringOfVm(vm: VirtualMachine, offerings: readonly Offering[]): Offering | undefined {
  const capacityType = vm.priority === 'Spot' ? 'spot' : 'on-demand';
  const zoneNumber = vm.zones?.[0];
  const vmSize = vm.hardwareProfile?.vmSize?.toLowerCase();
  return offerings.find(
    (o) =>
      o.vmSize.toLowerCase() === vmSize && o.capacityType === capacityType && o.zoneNumber === zoneNumber,
  );
}

/**
 * Everything besides the size that decides a node's capacity: the pod limit (the AKSNodeClass's, else the
 * network plugin's default), the OS disk, and the cluster's Kubernetes version (the AKSNodeClass status's,
 * which the image controller keeps current, else the setting). Resolved once here so the launch
 * choice, the bootstrap's kubelet flags and the NodeClaim status use the same figures.
 */
export function capacityOptions(settings: Settings, nodeClass: AKSNodeClass): CapacityOptions {
  const cluster = settings.cluster ?? {};
  const kubernetesVersion = nodeClass.status?.kubernetesVersion ?? cluster.kubernetesVersion;
  return {
    ...cluster,
    ...(kubernetesVersion !== undefined ? { kubernetesVersion } : {}),
    maxPods: maxPodsFor(nodeClass.spec.maxPods ?? nodeClass.spec.kubelet?.maxPods, cluster),
    ...(nodeClass.spec.osDiskSizeGB !== undefined ? { osDiskSizeGB: nodeClass.spec.osDiskSizeGB } : {}),
  };
}
