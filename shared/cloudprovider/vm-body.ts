// What launch sends to Azure and writes on the NodeClaim for a chosen offering: the VM body with its
// rendered bootstrap data, the offering's labels, and the reverse mapping from an existing VM to the
// catalog offering it was created as. Pure functions of settings and objects; no I/O.
import type { VirtualMachine } from '@azure/arm-compute';
import type { Settings } from '../config/settings.js';
import {
  buildAksNodeConfig,
  renderNodeCustomData,
  type ClusterNodeInputs,
} from './azure/decisions/aks-node-config.js';
import { encodeCustomData, kubeletLabels, registrationTaints } from './azure/decisions/bootstrap.js';
import { nicIpConfigurationCount } from './azure/decisions/network-mode.js';
import type { NodeOsSku } from './azure/decisions/node-image.js';
import {
  kubeletReservationFlags,
  maxPodsFor,
  nodeReservations,
  VM_MEMORY_OVERHEAD_FRACTION,
  type ClusterNodeSettings,
} from '../decisions/node-reservations.js';
import { offeringLabels, type CapacityOptions, type Offering } from '../decisions/offerings.js';
import { effectiveKubernetesVersion } from './azure/decisions/node-image-versions.js';
import { assertValidNodeClass } from './azure/decisions/nodeclass-validation.js';
import { buildVirtualMachine } from './azure/decisions/vm-spec.js';
import type { AKSNodeClass, NodeClaim, NodePool } from '../models/index.js';
import { WellKnown } from '../models/karpenter.js';
import type { Instance } from './types.js';

export function launchLabels(offering: Offering): Record<string, string> {
  const labels = offeringLabels(offering);
  return {
    [WellKnown.instanceTypeLabel]: offering.vmSize,
    [WellKnown.capacityTypeLabel]: offering.capacityType,
    ...(offering.zone ? { [WellKnown.zoneLabel]: offering.zone } : {}),
    ...Object.fromEntries(Object.entries(labels).filter(([key]) => key.startsWith('karpenter.azure.com/'))),
  };
}

/** The node image and credential a launch resolved before building the VM. */
export interface NodeLaunchInputs {
  imageId: string;
  osSku: NodeOsSku;
  /** "<id>.<secret>" the node joins with. */
  bootstrapToken: string;
}

const SUBNET_ID =
  /^\/subscriptions\/[^/]+\/resourceGroups\/([^/]+)\/providers\/Microsoft\.Network\/virtualNetworks\/([^/]+)\/subnets\/([^/]+)$/i;

/** What every node of the cluster is told about it, for a node on `subnetId`. */
export function clusterNodeInputs(settings: Settings, subnetId: string): ClusterNodeInputs {
  const subnet = SUBNET_ID.exec(subnetId);
  const { cluster } = settings;
  const nsgName = cluster.nodeSecurityGroupId.split('/').pop() ?? '';
  return {
    subscriptionId: settings.azure.subscriptionId,
    tenantId: cluster.tenantId,
    location: settings.azure.location,
    nodeResourceGroup: settings.azure.resourceGroup,
    kubernetesVersion: cluster.kubernetesVersion,
    apiServerName: new URL(settings.bootstrap.apiServerUrl).hostname,
    caCertPem: settings.bootstrap.caCertPem,
    networkMode: cluster.networkMode,
    dnsServiceIp: cluster.dnsServiceIp,
    vnetResourceGroup: subnet?.[1] ?? '',
    vnetName: subnet?.[2] ?? '',
    subnetName: subnet?.[3] ?? '',
    vnetGuid: cluster.vnetGuid,
    securityGroupName: nsgName,
    // AKS names the route table after the NSG: aks-agentpool-<cluster id>-routetable.
    routeTableName: nsgName.replace(/-nsg$/, '-routetable'),
    kubeletIdentityClientId: cluster.kubeletIdentity.clientId,
  };
}

export function vmBody(
  settings: Settings,
  nodeClaim: NodeClaim,
  offering: Offering,
  nodePool: NodePool | undefined,
  nodeClass: AKSNodeClass,
  node: NodeLaunchInputs,
): VirtualMachine {
  // Launch refuses an invalid class before it gets here; nothing of one is ever rendered regardless.
  assertValidNodeClass(nodeClass);
  const nodeLabels = kubeletLabels({
    ...nodePool?.spec.template.metadata?.labels,
    ...nodeClaim.metadata.labels,
    ...offeringLabels(offering),
    ...(nodePool ? { [WellKnown.nodePoolLabel]: nodePool.metadata.name } : {}),
  });
  const subnetId = nodeClass.spec.vnetSubnetID ?? settings.azure.defaultSubnetId;
  const reservations = nodeReservations(offering, capacityOptions(settings, nodeClass));
  const config = buildAksNodeConfig({
    // The node runs the class's effective Kubernetes version (pinned, or the control plane's), the
    // version its image was chosen for.
    cluster: {
      ...clusterNodeInputs(settings, subnetId),
      kubernetesVersion: effectiveKubernetesVersion(nodeClass, settings.cluster.kubernetesVersion),
    },
    vmSize: offering.vmSize,
    osSku: node.osSku,
    adminUsername: settings.azure.adminUsername,
    bootstrapToken: node.bootstrapToken,
    registerWithTaints: registrationTaints(nodeClaim),
    nodeLabels,
    kubeletConfig: nodeClass.spec.kubelet,
    reservations: kubeletReservationFlags(reservations),
  });
  return buildVirtualMachine({
    location: settings.azure.location,
    clusterName: settings.clusterName,
    nodePoolName: nodePool?.metadata.name ?? '',
    nodeClaimName: nodeClaim.metadata.name,
    offering,
    imageId: node.imageId,
    ...(nodeClass.spec.osDiskSizeGB !== undefined ? { osDiskSizeGB: nodeClass.spec.osDiskSizeGB } : {}),
    subnetId,
    customData: encodeCustomData(renderNodeCustomData(config)),
    sshPublicKey: settings.azure.sshPublicKey,
    adminUsername: settings.azure.adminUsername,
    kubeletIdentityResourceId: settings.cluster.kubeletIdentity.resourceId,
    loadBalancerBackendPoolIds: settings.cluster.loadBalancerBackendPoolIds,
    networkSecurityGroupId: settings.cluster.attachNsgToNic
      ? settings.cluster.nodeSecurityGroupId
      : undefined,
    ipConfigurationCount: nicIpConfigurationCount(settings.cluster.networkMode, reservations.maxPods),
    ...(nodeClass.spec.tags ? { extraTags: nodeClass.spec.tags } : {}),
  });
}

/**
 * The catalog offering an existing VM was created as (size, zone, priority, and the reservation of the
 * group it names, when its group's reservations are still known; otherwise its on-demand offering).
 */
export function offeringOfInstance(
  instance: Pick<Instance, 'vmSize' | 'zoneNumber' | 'spot' | 'reservationGroupId'>,
  offerings: readonly Offering[],
): Offering | undefined {
  const group = instance.reservationGroupId?.toLowerCase();
  const capacityType = instance.spot ? 'spot' : 'on-demand';
  const vmSize = instance.vmSize?.toLowerCase();
  const sameMachine = (o: Offering): boolean =>
    o.vmSize.toLowerCase() === vmSize && o.zoneNumber === instance.zoneNumber;
  const reserved =
    group === undefined
      ? undefined
      : offerings.find(
          (o) =>
            sameMachine(o) && o.capacityType === 'reserved' && o.reservationGroupId?.toLowerCase() === group,
        );
  return reserved ?? offerings.find((o) => sameMachine(o) && o.capacityType === capacityType);
}

/** The cluster facts that decide a node's reservations and default pod limit. */
function clusterNodeSettings(settings: Settings): ClusterNodeSettings {
  const { cluster } = settings;
  return {
    kubernetesVersion: cluster.kubernetesVersion,
    networkPlugin: cluster.network.plugin,
    networkPluginMode: cluster.network.pluginMode,
    // Carried only when set to something else, so launch inputs written before the setting stay equal.
    ...(cluster.vmMemoryOverheadFraction !== VM_MEMORY_OVERHEAD_FRACTION
      ? { vmMemoryOverheadFraction: cluster.vmMemoryOverheadFraction }
      : {}),
  };
}

/**
 * Everything besides the size that decides a node's capacity: the pod limit (the AKSNodeClass's, else the
 * network plugin's default), the OS disk, and the node's Kubernetes version (the AKSNodeClass's effective
 * one: its status's, which the status step keeps, else the one it will have). Resolved once here so the
 * launch choice, the bootstrap's kubelet flags and the NodeClaim status use the same figures.
 */
export function capacityOptions(settings: Settings, nodeClass: AKSNodeClass): CapacityOptions {
  const cluster = clusterNodeSettings(settings);
  const kubernetesVersion = effectiveKubernetesVersion(nodeClass, settings.cluster.kubernetesVersion);
  return {
    ...cluster,
    kubernetesVersion,
    maxPods: maxPodsFor(nodeClass.spec.maxPods ?? nodeClass.spec.kubelet?.maxPods, cluster),
    ...(nodeClass.spec.osDiskSizeGB !== undefined ? { osDiskSizeGB: nodeClass.spec.osDiskSizeGB } : {}),
  };
}
