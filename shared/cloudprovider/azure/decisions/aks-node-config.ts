// The node's bootstrap data in AgentBaker's public node contract: an AKSNodeConfig v1 document
// (aksnodeconfig.v1.Configuration, serialised as protobuf JSON with the proto field names and enum
// names), which aks-node-controller on current AKS node images reads from
// /opt/azure/containers/aks-node-controller-config.json and turns into the image's own provisioning:
// kubelet of the requested version, containerd, CNI, azure.json, credential provider, kubelet serving
// certificate, bootstrap kubeconfig, then kubelet. The document is delivered as AgentBaker's helper
// delivers it: a MIME multipart custom data whose cloud-boothook part writes the file (base64) and starts
// the controller, plus a trivial cloud-config part. Only the fields this project sets are typed here.
// Pure: no I/O.
import type { KubeletConfiguration } from '../../../models/aks-node-class.js';
import type { Taint } from '../../../models/kube.js';
import { formatTaint, kubeletConfigFlags, parseTaint } from './bootstrap.js';
import { agentBakerNetworkPlugin, networkLabels, type NetworkModeName } from './network-mode.js';
import { atLeast, minorVersion } from '../../../decisions/kubernetes-version.js';
import { IMAGE_GC_DEFAULTS, describeValue, isFlagWord } from './nodeclass-validation.js';
import type { NodeOsSku } from './node-image.js';
import type { KubeletReservationFlags } from '../../../decisions/node-reservations.js';

export const AKS_NODE_CONFIG_VERSION = 'v1';
export const AKS_NODE_CONFIG_PATH = '/opt/azure/containers/aks-node-controller-config.json';

/** aksnodeconfig.v1.Configuration, the subset this project writes (proto field names). */
export interface AksNodeConfig {
  version: string;
  api_server_config: { api_server_name: string };
  auth_config: {
    tenant_id?: string;
    subscription_id: string;
    assigned_identity_id: string;
    use_managed_identity_extension: boolean;
  };
  bootstrapping_config: {
    bootstrapping_auth_method: 'BOOTSTRAPPING_AUTH_METHOD_BOOTSTRAP_TOKEN';
    cluster_join_method: 'CLUSTER_JOIN_METHOD_GENERATE_CSR';
    tls_bootstrapping_token: string;
  };
  cluster_config: {
    resource_group: string;
    location: string;
    vm_type: 'VM_TYPE_STANDARD';
    use_instance_metadata: boolean;
    load_balancer_config: { load_balancer_sku: 'LOAD_BALANCER_SKU_STANDARD' };
    cluster_network_config: {
      vnet_name: string;
      vnet_resource_group: string;
      subnet: string;
      security_group_name: string;
      route_table: string;
      core_dns_service_ip: string;
    };
  };
  network_config: { network_plugin: 'NETWORK_PLUGIN_NONE' | 'NETWORK_PLUGIN_AZURE' };
  kubelet_config: {
    /** Flag name with its leading "--" → value; the image joins them sorted into KUBELET_FLAGS. */
    kubelet_flags: Record<string, string>;
    /** Kept apart from the flags: the image validates them and passes them as KUBELET_NODE_LABELS. */
    kubelet_node_labels: Record<string, string>;
    kubelet_disk_type: 'KUBELET_DISK_OS_DISK';
  };
  /** Base64 of the cluster CA's PEM, as the image decodes it into /etc/kubernetes/certs/ca.crt. */
  kubernetes_ca_cert: string;
  kubernetes_version: string;
  vm_size: string;
  linux_admin_username: string;
  is_vhd: boolean;
  needs_cgroupv2: boolean;
  workload_runtime: 'WORKLOAD_RUNTIME_OCI_CONTAINER';
}

/** What the cluster contributes to every node's configuration (read once per cluster, from settings). */
export interface ClusterNodeInputs {
  subscriptionId: string;
  tenantId?: string | undefined;
  location: string;
  /** The AKS node resource group (MC_…), which also names the cluster in kubernetes.azure.com/cluster. */
  nodeResourceGroup: string;
  kubernetesVersion: string;
  /** The API server's host name (FQDN), without scheme or port. */
  apiServerName: string;
  caCertPem: string;
  networkMode: NetworkModeName;
  dnsServiceIp: string;
  vnetName: string;
  vnetResourceGroup: string;
  subnetName: string;
  vnetGuid?: string | undefined;
  securityGroupName: string;
  routeTableName: string;
  kubeletIdentityClientId: string;
}

export interface NodeConfigInput {
  cluster: ClusterNodeInputs;
  vmSize: string;
  osSku: NodeOsSku;
  adminUsername: string;
  /** "<id>.<secret>" of this node's own bootstrap token. */
  bootstrapToken: string;
  /** From registrationTaints(nodeClaim): karpenter.sh/unregistered:NoExecute first. */
  registerWithTaints: readonly Taint[];
  /** The NodeClaim's labels kubelet may set (kubeletLabels); AKS's own labels are added here. */
  nodeLabels: Readonly<Record<string, string>>;
  kubeletConfig?: KubeletConfiguration | undefined;
  /** --kube-reserved, --eviction-hard and --max-pods the launch planned this VM size's allocatable with. */
  reservations: KubeletReservationFlags;
}

const TLS_CIPHER_SUITES = [
  'TLS_ECDHE_ECDSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_ECDSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_ECDSA_WITH_CHACHA20_POLY1305',
  'TLS_ECDHE_RSA_WITH_AES_128_GCM_SHA256',
  'TLS_ECDHE_RSA_WITH_AES_256_GCM_SHA384',
  'TLS_ECDHE_RSA_WITH_CHACHA20_POLY1305',
].join(',');

// Sorted by key, so the same node always gets the same document.
function sortedByKey(map: Record<string, string>): Record<string, string> {
  return Object.fromEntries(Object.entries(map).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)));
}

/**
 * kubelet flags the AKS images expect (the provider's base set, adjusted per Kubernetes version), plus
 * this node's taints, cluster DNS, reservations (the same figures launch planned allocatable with) and
 * AKSNodeClass kubelet settings (parsed, see kubeletConfigFlags). The kubeconfig and bootstrap kubeconfig
 * flags are not here: the image adds them with the bootstrap token. Throws NodeClassFieldError for a
 * kubelet field that does not parse and NodeConfigError for any value that is not one word.
 */
export function aksKubeletFlags(input: NodeConfigInput): Record<string, string> {
  const version = minorVersion(input.cluster.kubernetesVersion) ?? [1, 0];
  const flags: Record<string, string> = {
    '--address': '0.0.0.0',
    '--anonymous-auth': 'false',
    '--authentication-token-webhook': 'true',
    '--authorization-mode': 'Webhook',
    '--cgroups-per-qos': 'true',
    '--client-ca-file': '/etc/kubernetes/certs/ca.crt',
    '--cloud-provider': 'external',
    '--cluster-dns': input.cluster.dnsServiceIp,
    '--cluster-domain': 'cluster.local',
    '--enforce-node-allocatable': 'pods',
    '--event-qps': '0',
    '--image-gc-high-threshold': String(IMAGE_GC_DEFAULTS.high),
    '--image-gc-low-threshold': String(IMAGE_GC_DEFAULTS.low),
    '--node-status-update-frequency': '10s',
    '--pod-manifest-path': '/etc/kubernetes/manifests',
    '--pod-max-pids': '-1',
    '--protect-kernel-defaults': 'true',
    '--read-only-port': '0',
    '--register-with-taints': input.registerWithTaints.map(formatTaint).join(','),
    '--resolv-conf': '/run/systemd/resolve/resolv.conf',
    '--rotate-certificates': 'true',
    '--tls-cert-file': '/etc/kubernetes/certs/kubeletserver.crt',
    '--tls-cipher-suites': TLS_CIPHER_SUITES,
    '--tls-private-key-file': '/etc/kubernetes/certs/kubeletserver.key',
  };
  if (!atLeast(version, 1, 34)) {
    flags['--cloud-config'] = '/etc/kubernetes/azure.json';
    // Removed from kubelet in 1.34; the image drops it there too.
    flags['--streaming-connection-idle-timeout'] = '4h';
  }
  if (!atLeast(version, 1, 35))
    flags['--pod-infra-container-image'] = 'mcr.microsoft.com/oss/kubernetes/pause:3.6';
  if (!atLeast(version, 1, 31)) flags['--keep-terminated-pod-volumes'] = 'false';
  if (atLeast(version, 1, 30)) {
    flags['--image-credential-provider-config'] = '/var/lib/kubelet/credential-provider-config.yaml';
    flags['--image-credential-provider-bin-dir'] = '/var/lib/kubelet/credential-provider';
  } else {
    flags['--azure-container-registry-config'] = '/etc/kubernetes/azure.json';
  }
  for (const [name, value] of Object.entries(input.reservations)) flags[`--${name}`] = value;
  for (const [name, value] of kubeletConfigFlags(input.kubeletConfig)) flags[`--${name}`] = value;
  // The image joins these into KUBELET_FLAGS and expands it unquoted: a value that would not stay one
  // word there (whatever let it through) must not reach a node at all.
  for (const [name, value] of Object.entries(flags)) {
    if (!isFlagWord(value))
      throw new NodeConfigError(
        `kubelet flag ${name}: ${describeValue(value)} would not stay one word on kubelet's command line`,
      );
  }
  return sortedByKey(flags);
}

/** kubernetes.azure.com/cluster: the node resource group, as AKS writes it (azure-cns selects on it). */
export function clusterLabelValue(nodeResourceGroup: string): string {
  return nodeResourceGroup.replace(/[^A-Za-z0-9_.-]/g, '_').slice(0, 63);
}

/** AKS's node labels (role, cluster, identity, OS, network) over the NodeClaim's own. */
export function aksNodeLabels(input: NodeConfigInput): Record<string, string> {
  const { cluster } = input;
  const version = minorVersion(cluster.kubernetesVersion) ?? [1, 0];
  const labels: Record<string, string> = {
    ...input.nodeLabels,
    'kubernetes.azure.com/role': 'agent',
    'kubernetes.azure.com/mode': 'user',
    'kubernetes.azure.com/cluster': clusterLabelValue(cluster.nodeResourceGroup),
    'kubernetes.azure.com/kubelet-identity-client-id': cluster.kubeletIdentityClientId,
    'kubernetes.azure.com/os-sku': input.osSku.startsWith('Ubuntu') ? 'Ubuntu' : 'AzureLinux',
    'kubernetes.azure.com/os-sku-effective': input.osSku,
    ...networkLabels({
      mode: cluster.networkMode,
      subnetName: cluster.subnetName,
      vnetGuid: cluster.vnetGuid,
      kubernetesMinor: version,
    }),
  };
  return sortedByKey(labels);
}

/** The AKSNodeConfig document for one node. */
export function buildAksNodeConfig(input: NodeConfigInput): AksNodeConfig {
  const { cluster } = input;
  return {
    version: AKS_NODE_CONFIG_VERSION,
    api_server_config: { api_server_name: cluster.apiServerName },
    auth_config: {
      ...(cluster.tenantId ? { tenant_id: cluster.tenantId } : {}),
      subscription_id: cluster.subscriptionId,
      assigned_identity_id: cluster.kubeletIdentityClientId,
      use_managed_identity_extension: true,
    },
    bootstrapping_config: {
      bootstrapping_auth_method: 'BOOTSTRAPPING_AUTH_METHOD_BOOTSTRAP_TOKEN',
      cluster_join_method: 'CLUSTER_JOIN_METHOD_GENERATE_CSR',
      tls_bootstrapping_token: input.bootstrapToken,
    },
    cluster_config: {
      resource_group: cluster.nodeResourceGroup,
      location: cluster.location,
      // A standalone VM, not a scale set instance: cloud-provider-azure must address it as such.
      vm_type: 'VM_TYPE_STANDARD',
      use_instance_metadata: true,
      load_balancer_config: { load_balancer_sku: 'LOAD_BALANCER_SKU_STANDARD' },
      cluster_network_config: {
        vnet_name: cluster.vnetName,
        vnet_resource_group: cluster.vnetResourceGroup,
        subnet: cluster.subnetName,
        security_group_name: cluster.securityGroupName,
        route_table: cluster.routeTableName,
        core_dns_service_ip: cluster.dnsServiceIp,
      },
    },
    network_config: { network_plugin: agentBakerNetworkPlugin(cluster.networkMode) },
    kubelet_config: {
      kubelet_flags: aksKubeletFlags(input),
      kubelet_node_labels: aksNodeLabels(input),
      kubelet_disk_type: 'KUBELET_DISK_OS_DISK',
    },
    kubernetes_ca_cert: Buffer.from(cluster.caCertPem, 'utf8').toString('base64'),
    kubernetes_version: cluster.kubernetesVersion.replace(/^v/, ''),
    vm_size: input.vmSize,
    linux_admin_username: input.adminUsername,
    is_vhd: true,
    needs_cgroupv2: true,
    workload_runtime: 'WORKLOAD_RUNTIME_OCI_CONTAINER',
  };
}

export class NodeConfigError extends Error {
  constructor(message: string) {
    super(`AKSNodeConfig: ${message}`);
    this.name = 'NodeConfigError';
  }
}

function at(document: unknown, path: string): unknown {
  let value: unknown = document;
  for (const part of path.split('.')) {
    if (typeof value !== 'object' || value === null) return undefined;
    value = (value as Record<string, unknown>)[part];
  }
  return value;
}

/**
 * Fields aks-node-controller's own validation requires (nodeconfigutils.Validate), then the ones a join
 * cannot do without: the image has no defaults for the CA, the version, the token, kubelet flags or labels.
 */
export const REQUIRED_STRING_FIELDS = [
  'version',
  'auth_config.subscription_id',
  'cluster_config.resource_group',
  'cluster_config.location',
  'cluster_config.cluster_network_config.vnet_name',
  'cluster_config.cluster_network_config.route_table',
  'api_server_config.api_server_name',
  'kubernetes_ca_cert',
  'kubernetes_version',
  'bootstrapping_config.tls_bootstrapping_token',
  'auth_config.assigned_identity_id',
  'cluster_config.cluster_network_config.subnet',
  'cluster_config.cluster_network_config.security_group_name',
  'cluster_config.cluster_network_config.core_dns_service_ip',
  'network_config.network_plugin',
  'vm_size',
] as const;

export const REQUIRED_MAP_FIELDS = [
  'kubelet_config.kubelet_flags',
  'kubelet_config.kubelet_node_labels',
] as const;

/** Problems with a decoded document, one sentence per missing or malformed field; [] when it can join. */
export function nodeConfigProblems(document: unknown): string[] {
  const problems: string[] = [];
  for (const field of REQUIRED_STRING_FIELDS) {
    const value = at(document, field);
    if (typeof value !== 'string' || value === '') problems.push(`required field ${field} is missing`);
  }
  for (const field of REQUIRED_MAP_FIELDS) {
    const value = at(document, field);
    const isMap = typeof value === 'object' && value !== null && !Array.isArray(value);
    if (!isMap || Object.values(value).some((v) => typeof v !== 'string')) {
      problems.push(`required field ${field} is not a map of strings`);
    }
  }
  if (at(document, 'version') !== undefined && at(document, 'version') !== AKS_NODE_CONFIG_VERSION) {
    problems.push(`version is ${JSON.stringify(at(document, 'version'))}, not "${AKS_NODE_CONFIG_VERSION}"`);
  }
  return problems;
}

const BOUNDARY = 'aks-node-config-boundary';

function boothook(configJson: string): string {
  const encoded = Buffer.from(configJson, 'utf8').toString('base64');
  return [
    '#cloud-boothook',
    '#!/bin/bash',
    'set -euo pipefail',
    'mkdir -p /opt/azure/containers /var/log/azure',
    `cat <<'EOF' | base64 -d >${AKS_NODE_CONFIG_PATH}`,
    encoded,
    'EOF',
    `chmod 0600 ${AKS_NODE_CONFIG_PATH}`,
    'if [ -f /opt/azure/containers/aks-node-controller-launcher.sh ]; then',
    '  nohup /bin/bash /opt/azure/containers/aks-node-controller-launcher.sh > /var/log/azure/aks-node-controller.output 2>&1 &',
    'else',
    '  systemctl start --no-block aks-node-controller.service',
    'fi',
    '',
  ].join('\n');
}

const CLOUD_CONFIG = '#cloud-config\nruncmd:\n- echo "AKS Node Controller cloud-init completed at $(date)"\n';

function mimePart(contentType: string, content: string): string {
  return [
    `--${BOUNDARY}`,
    `Content-Type: ${contentType}`,
    'Mime-Version: 1.0',
    'Content-Transfer-Encoding: 7bit',
    '',
    content,
  ].join('\r\n');
}

/** The custom data text (before base64): MIME multipart with the boothook and a cloud-config part. */
export function renderNodeCustomData(config: AksNodeConfig): string {
  return [
    'MIME-Version: 1.0',
    `Content-Type: multipart/mixed; boundary="${BOUNDARY}"`,
    '',
    mimePart('text/cloud-boothook', boothook(JSON.stringify(config, null, 2))),
    mimePart('text/cloud-config', CLOUD_CONFIG),
    `--${BOUNDARY}--`,
    '',
  ].join('\r\n');
}

/** The document a cloud-boothook part writes to AKS_NODE_CONFIG_PATH, decoded. */
function configFromBoothook(script: string): string | undefined {
  const marker = `cat <<'EOF' | base64 -d >${AKS_NODE_CONFIG_PATH}`;
  const lines = script.split(/\r?\n/);
  const start = lines.findIndex((line) => line.trim() === marker);
  if (start < 0) return undefined;
  const end = lines.indexOf('EOF', start + 1);
  if (end < 0) return undefined;
  return Buffer.from(lines.slice(start + 1, end).join(''), 'base64').toString('utf8');
}

/**
 * Reads custom data text (MIME multipart from renderNodeCustomData or AgentBaker's helper, any
 * boundary) back into the AKSNodeConfig document it delivers; throws NodeConfigError when there is none
 * or it lacks a field a join needs.
 */
export function parseNodeCustomData(text: string): AksNodeConfig {
  const boundary = /boundary="?([^";\r\n]+)"?/i.exec(text)?.[1];
  if (!boundary) throw new NodeConfigError('custom data is not MIME multipart');
  const parts = text.split(`--${boundary}`).slice(1);
  let json: string | undefined;
  for (const part of parts) {
    const split = part.search(/\r?\n\r?\n/);
    if (split < 0) continue;
    const headers = part.slice(0, split);
    if (!/content-type:\s*text\/cloud-boothook/i.test(headers)) continue;
    json = configFromBoothook(part.slice(split).replace(/^\r?\n\r?\n/, ''));
    if (json !== undefined) break;
  }
  if (json === undefined) throw new NodeConfigError(`no cloud-boothook part writes ${AKS_NODE_CONFIG_PATH}`);
  let document: unknown;
  try {
    document = JSON.parse(json);
  } catch (error) {
    throw new NodeConfigError(`the configuration is not JSON: ${(error as Error).message}`);
  }
  const problems = nodeConfigProblems(document);
  if (problems.length > 0) throw new NodeConfigError(problems.join('; '));
  return document as AksNodeConfig;
}

/** What a kubelet started from this configuration registers with. */
export interface KubeletRegistration {
  apiServerName: string;
  caCertPem: string;
  bootstrapToken: string;
  kubernetesVersion: string;
  nodeLabels: Record<string, string>;
  registerWithTaints: Taint[];
  /** Flag name without the leading "--" → value. */
  kubeletFlags: Record<string, string>;
}

export function kubeletRegistration(config: AksNodeConfig): KubeletRegistration {
  const flags = Object.fromEntries(
    Object.entries(config.kubelet_config.kubelet_flags).map(([name, value]) => [
      name.replace(/^--/, ''),
      value,
    ]),
  );
  const taints = flags['register-with-taints'] ?? '';
  let registerWithTaints: Taint[];
  try {
    registerWithTaints = taints === '' ? [] : taints.split(',').map(parseTaint);
  } catch (error) {
    throw new NodeConfigError((error as Error).message);
  }
  return {
    apiServerName: config.api_server_config.api_server_name,
    caCertPem: Buffer.from(config.kubernetes_ca_cert, 'base64').toString('utf8'),
    bootstrapToken: config.bootstrapping_config.tls_bootstrapping_token,
    kubernetesVersion: config.kubernetes_version,
    nodeLabels: { ...config.kubelet_config.kubelet_node_labels },
    registerWithTaints,
    kubeletFlags: flags,
  };
}
