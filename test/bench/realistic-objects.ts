// Nodes and NodeClaims the size and shape a real AKS cluster has, for the sweep bench. A Node as an AKS
// kubelet writes it is about 19 KB of JSON as the API returns it: some 37 labels, 8 annotations, 50
// cached images (about 10 KB), nodeInfo, addresses, capacity and allocatable, five conditions, and
// managedFields from several field managers (about 4 KB). The objects are written the way those managers
// write them, with server-side apply, so the API server builds the managedFields itself.
import { createHash } from 'node:crypto';

const digest = (seed: string): string => createHash('sha256').update(seed).digest('hex');

/** The labels AKS, kubelet and this system put on a node (37 in all with the bench's own two). */
export function nodeLabels(vm: string, zone: string, extra: Record<string, string>): Record<string, string> {
  return {
    agentpool: 'general',
    'beta.kubernetes.io/arch': 'amd64',
    'beta.kubernetes.io/instance-type': 'Standard_D4s_v5',
    'beta.kubernetes.io/os': 'linux',
    'failure-domain.beta.kubernetes.io/region': 'westus2',
    'failure-domain.beta.kubernetes.io/zone': zone,
    'kubernetes.azure.com/agentpool': 'general',
    'kubernetes.azure.com/cluster': 'MC_rg-bench_bench_westus2',
    'kubernetes.azure.com/consolidated-additional-properties': digest(vm).slice(0, 40),
    'kubernetes.azure.com/kubelet-identity-client-id': '2f1c5d0e-7a4b-4c1e-9a8e-3b5f6d7c8e9f',
    'kubernetes.azure.com/mode': 'user',
    'kubernetes.azure.com/network-policy': 'cilium',
    'kubernetes.azure.com/node-image-version': 'AKSUbuntu-2204gen2containerd-202511.07.0',
    'kubernetes.azure.com/nodenetwork-vnetguid': '0c8d7e6f-5a4b-4c3d-8e2f-1a0b9c8d7e6f',
    'kubernetes.azure.com/nodepool-type': 'VirtualMachines',
    'kubernetes.azure.com/os-sku': 'Ubuntu',
    'kubernetes.azure.com/podnetwork-type': 'overlay',
    'kubernetes.azure.com/role': 'agent',
    'kubernetes.azure.com/storageprofile': 'managed',
    'kubernetes.azure.com/storagetier': 'Premium_LRS',
    'kubernetes.azure.com/ebpf-dataplane': 'cilium',
    'kubernetes.io/arch': 'amd64',
    'kubernetes.io/hostname': vm,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/role': 'agent',
    'node-role.kubernetes.io/agent': '',
    'node.kubernetes.io/instance-type': 'Standard_D4s_v5',
    storageprofile: 'managed',
    storagetier: 'Premium_LRS',
    'topology.disk.csi.azure.com/zone': zone,
    'topology.kubernetes.io/region': 'westus2',
    'topology.kubernetes.io/zone': zone,
    'karpenter.azure.com/sku-family': 'D',
    'karpenter.azure.com/sku-cpu': '4',
    'karpenter.azure.com/sku-memory': '16384',
    ...extra,
  };
}

export function nodeAnnotations(vm: string): Record<string, string> {
  return {
    'alpha.kubernetes.io/provided-node-ip': '10.224.0.17',
    'csi.volume.kubernetes.io/nodeid': JSON.stringify({
      'disk.csi.azure.com': vm,
      'file.csi.azure.com': vm,
    }),
    'node.alpha.kubernetes.io/ttl': '0',
    'volumes.kubernetes.io/controller-managed-attach-detach': 'true',
    'network.cilium.io/ipv4-pod-cidr': '10.244.3.0/24',
    'network.cilium.io/ipv4-cilium-host': '10.244.3.125',
    'network.cilium.io/ipv4-health-ip': '10.244.3.41',
    'kubernetes.azure.com/vm-id': digest(`vm-${vm}`).slice(0, 32),
  };
}

const imageRepositories = [
  'mcr.microsoft.com/oss/kubernetes/kube-proxy',
  'mcr.microsoft.com/containernetworking/azure-cns',
  'mcr.microsoft.com/containernetworking/cilium/cilium',
  'mcr.microsoft.com/oss/kubernetes-csi/azuredisk-csi',
  'mcr.microsoft.com/oss/kubernetes-csi/azurefile-csi',
  'mcr.microsoft.com/oss/kubernetes-csi/csi-node-driver-registrar',
  'mcr.microsoft.com/oss/kubernetes-csi/livenessprobe',
  'mcr.microsoft.com/oss/kubernetes/coredns',
  'mcr.microsoft.com/azuremonitor/containerinsights/ciprod',
  'mcr.microsoft.com/oss/kubernetes/pause',
];

/** 50 cached images, as kubelet reports them (digest and tag names, size): about 10 KB. */
export function nodeImages(): { names: string[]; sizeBytes: number }[] {
  return Array.from({ length: 50 }, (_, i) => {
    const repository = imageRepositories[i % imageRepositories.length] ?? 'mcr.microsoft.com/unknown';
    const tag = `v1.${30 + (i % 5)}.${i}`;
    return {
      names: [`${repository}@sha256:${digest(`${repository}${i}`)}`, `${repository}:${tag}`],
      sizeBytes: 20_000_000 + i * 1_234_567,
    };
  });
}

export function nodeStatus(vm: string, at: string) {
  const condition = (type: string, status: string, reason: string, message: string) => ({
    type,
    status,
    reason,
    message,
    lastHeartbeatTime: at,
    lastTransitionTime: at,
  });
  return {
    capacity: {
      cpu: '4',
      'ephemeral-storage': '129886128Ki',
      'hugepages-1Gi': '0',
      'hugepages-2Mi': '0',
      memory: '16365256Ki',
      pods: '250',
    },
    allocatable: {
      cpu: '3860m',
      'ephemeral-storage': '119703055367',
      'hugepages-1Gi': '0',
      'hugepages-2Mi': '0',
      memory: '12882120Ki',
      pods: '250',
    },
    conditions: [
      condition(
        'MemoryPressure',
        'False',
        'KubeletHasSufficientMemory',
        'kubelet has sufficient memory available',
      ),
      condition('DiskPressure', 'False', 'KubeletHasNoDiskPressure', 'kubelet has no disk pressure'),
      condition('PIDPressure', 'False', 'KubeletHasSufficientPID', 'kubelet has sufficient PID available'),
      condition('NetworkUnavailable', 'False', 'CiliumIsUp', 'Cilium is running on this node'),
      condition('Ready', 'True', 'KubeletReady', 'kubelet is posting ready status'),
    ],
    addresses: [
      { type: 'InternalIP', address: '10.224.0.17' },
      { type: 'Hostname', address: vm },
    ],
    daemonEndpoints: { kubeletEndpoint: { Port: 10250 } },
    nodeInfo: {
      machineID: digest(`machine-${vm}`).slice(0, 32),
      systemUUID: '8a7c6b5d-4e3f-2a1b-0c9d-8e7f6a5b4c3d',
      bootID: '1b2c3d4e-5f6a-7b8c-9d0e-1f2a3b4c5d6e',
      kernelVersion: '5.15.0-1079-azure',
      osImage: 'Ubuntu 22.04.5 LTS',
      containerRuntimeVersion: 'containerd://1.7.27-1',
      kubeletVersion: 'v1.34.4',
      kubeProxyVersion: '',
      operatingSystem: 'linux',
      architecture: 'amd64',
    },
    images: nodeImages(),
  };
}

/** A NodeClaim's status as this system writes it once the node is initialized. */
export function nodeClaimStatus(providerID: string, vm: string, at: string) {
  const condition = (type: string) => ({
    type,
    status: 'True',
    reason: type,
    message: '',
    lastTransitionTime: at,
  });
  return {
    providerID,
    nodeName: vm,
    imageID:
      '/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2204gen2containerd/versions/202511.07.0',
    capacity: { cpu: '4', 'ephemeral-storage': '128G', memory: '16Gi', pods: '250' },
    allocatable: { cpu: '3860m', 'ephemeral-storage': '119G', memory: '12580Mi', pods: '250' },
    conditions: ['Launched', 'Registered', 'Initialized', 'Ready'].map(condition),
  };
}

/** The annotations and labels this system writes on a NodeClaim it launched. */
export function nodeClaimMetadata(pool: string, zone: string, extraLabels: Record<string, string>) {
  return {
    labels: {
      'karpenter.sh/nodepool': pool,
      'karpenter.sh/capacity-type': 'on-demand',
      'node.kubernetes.io/instance-type': 'Standard_D4s_v5',
      'topology.kubernetes.io/zone': zone,
      'kubernetes.io/arch': 'amd64',
      'kubernetes.io/os': 'linux',
      'karpenter.azure.com/sku-family': 'D',
      ...extraLabels,
    },
    annotations: {
      'karpenter.sh/nodepool-hash': '6821555240594823839',
      'karpenter.sh/nodepool-hash-version': 'v3',
      'karpenter.azure.com/aksnodeclass-hash': '13166838571217468413',
      'karpenter.azure.com/aksnodeclass-hash-version': 'v3',
      'karpenter.sh/launch-attempt': '1',
    },
  };
}
