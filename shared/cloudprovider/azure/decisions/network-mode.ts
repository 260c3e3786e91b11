// The cluster's network profile as it shapes a node: what the node image installs (AgentBaker's network
// plugin), which labels the AKS networking DaemonSets select on, and how many IP configurations the NIC
// needs. Supported are the modes the Azure provider supports for VMs outside agent pools: Azure CNI
// overlay, Azure CNI overlay with the Cilium dataplane, and Azure CNI node-subnet (pod IPs from the node
// subnet). Kubenet and Calico are not. Pure.

export type NetworkPlugin = 'azure' | 'none';
export type NetworkPluginMode = 'overlay' | '';
export type NetworkDataplane = 'azure' | 'cilium';

export interface NetworkProfile {
  plugin: NetworkPlugin;
  pluginMode: NetworkPluginMode;
  dataplane: NetworkDataplane;
}

export type NetworkModeName = 'azure-cni-overlay' | 'cilium-overlay' | 'node-subnet';

/** The supported mode of a network profile, or a sentence saying why it is not supported. */
export function networkMode(profile: NetworkProfile): NetworkModeName | { problem: string } {
  if (profile.plugin !== 'azure') {
    return {
      problem: `network plugin "${profile.plugin}" is not supported (Azure CNI overlay, Cilium or node-subnet)`,
    };
  }
  if (profile.pluginMode === 'overlay')
    return profile.dataplane === 'cilium' ? 'cilium-overlay' : 'azure-cni-overlay';
  if (profile.dataplane === 'cilium') {
    return { problem: 'Cilium with pod IPs from a subnet is not supported (use Cilium overlay)' };
  }
  return 'node-subnet';
}

/**
 * What the node image installs itself: on overlay (and Cilium) the node installs no CNI, the AKS
 * DaemonSets (azure-cns, cilium) bring it; on node-subnet the image installs the azure-vnet plugin.
 */
export function agentBakerNetworkPlugin(
  mode: NetworkModeName,
): 'NETWORK_PLUGIN_NONE' | 'NETWORK_PLUGIN_AZURE' {
  return mode === 'node-subnet' ? 'NETWORK_PLUGIN_AZURE' : 'NETWORK_PLUGIN_NONE';
}

export interface NetworkLabelInput {
  mode: NetworkModeName;
  /** Name of the node subnet. */
  subnetName: string;
  /** GUID of the node VNet (its resourceGuid); overlay's CNS uses it. Optional. */
  vnetGuid?: string | undefined;
  /** [major, minor] of the cluster's Kubernetes version. */
  kubernetesMinor: readonly [number, number];
}

/** Labels the networking DaemonSets of the mode select on (the provider's network labels). */
export function networkLabels(input: NetworkLabelInput): Record<string, string> {
  const labels: Record<string, string> = {};
  if (input.mode === 'azure-cni-overlay' || input.mode === 'cilium-overlay') {
    labels['kubernetes.azure.com/azure-cni-overlay'] = 'true';
    labels['kubernetes.azure.com/podnetwork-type'] = 'overlay';
    labels['kubernetes.azure.com/network-subnet'] = input.subnetName;
    if (input.vnetGuid) labels['kubernetes.azure.com/nodenetwork-vnetguid'] = input.vnetGuid;
    const [major, minor] = input.kubernetesMinor;
    labels['kubernetes.azure.com/network-stateless-cni'] = String(major > 1 || minor >= 34);
  }
  if (input.mode === 'cilium-overlay') labels['kubernetes.azure.com/ebpf-dataplane'] = 'cilium';
  return labels;
}

/**
 * IP configurations the node's NIC needs: one, plus maxPods − 1 secondary ones on node-subnet, where
 * every pod takes an address of the subnet from its node's NIC.
 */
export function nicIpConfigurationCount(mode: NetworkModeName, maxPods: number): number {
  return mode === 'node-subnet' ? Math.max(1, maxPods) : 1;
}
