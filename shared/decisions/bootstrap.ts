// The VM's bootstrap data: a cloud-init document that configures and starts kubelet so the node
// registers with the API server already carrying the taints and labels it must have from its first
// moment (the registration race in DESIGN.md), and the parser that reads it back.
//
// The document is "#cloud-config" followed by JSON. YAML (which cloud-init reads) is a superset of
// JSON, so this is a valid cloud-config, and it parses back exactly without a YAML library. The kubelet
// flags are written as plain text (not base64) so the decoded custom data literally contains
// `--register-with-taints=karpenter.sh/unregistered:NoExecute,...` for anyone inspecting a VM.
import type { KubeletConfiguration } from '../models/aks-node-class.js';
import type { KubeletReservationFlags } from './node-reservations.js';
import type { NodeClaimSpec } from '../models/karpenter.js';
import type { Taint, TaintEffect } from '../models/kube.js';
import { WellKnown } from '../models/karpenter.js';

export const BOOTSTRAP_PATHS = {
  caCert: '/etc/kubernetes/certs/ca.crt',
  bootstrapKubeconfig: '/var/lib/kubelet/bootstrap-kubeconfig',
  kubeconfig: '/var/lib/kubelet/kubeconfig',
  kubeletEnv: '/etc/default/kubelet',
  kubeletDropIn: '/etc/systemd/system/kubelet.service.d/10-karpenter.conf',
  kubeletBinary: '/usr/local/bin/kubelet',
} as const;

const CLOUD_CONFIG_HEADER = '#cloud-config\n';
const FLAGS_VARIABLE = 'KUBELET_FLAGS';

/** Azure accepts at most 65,535 bytes of custom data (before base64). */
export const MAX_CUSTOM_DATA_BYTES = 65_535;

export interface BootstrapInput {
  clusterName: string;
  apiServerUrl: string;
  caCertPem: string;
  bootstrapToken: string;
  nodeName: string;
  /** From registrationTaints(nodeClaim): karpenter.sh/unregistered:NoExecute first. */
  registerWithTaints: readonly Taint[];
  /** Labels for --node-labels; pass them through kubeletLabels first. */
  nodeLabels: Readonly<Record<string, string>>;
  kubeletConfig?: KubeletConfiguration;
  /**
   * --kube-reserved, --eviction-hard and --max-pods from kubeletReservationFlags, so the node enforces
   * the allocatable launch planned with.
   */
  reservations?: KubeletReservationFlags;
}

export interface ParsedBootstrap {
  clusterName: string;
  apiServerUrl: string;
  caCertPem: string;
  bootstrapToken: string;
  nodeName: string;
  registerWithTaints: Taint[];
  nodeLabels: Record<string, string>;
  /** Every kubelet flag from the env file, name without the leading "--" → value. */
  kubeletFlags: Record<string, string>;
}

export class BootstrapParseError extends Error {
  constructor(message: string) {
    super(`bootstrap data: ${message}`);
    this.name = 'BootstrapParseError';
  }
}

function taintIdentity(taint: Taint): string {
  return `${taint.key}\u0000${taint.effect}`;
}

/**
 * Taints kubelet registers the node with: karpenter.sh/unregistered:NoExecute first (so nothing runs on
 * the node before the system has synced it), then spec.taints, then spec.startupTaints. Duplicates by
 * key and effect keep the first occurrence, as the API server would reject a Node with both. Empty
 * values are dropped and timeAdded is not carried: neither survives the kubelet flag format.
 */
export function registrationTaints(nodeClaim: {
  spec: Pick<NodeClaimSpec, 'taints' | 'startupTaints'>;
}): Taint[] {
  const all: Taint[] = [
    { key: WellKnown.unregisteredTaintKey, effect: 'NoExecute' },
    ...(nodeClaim.spec.taints ?? []),
    ...(nodeClaim.spec.startupTaints ?? []),
  ];
  const seen = new Set<string>();
  const result: Taint[] = [];
  for (const taint of all) {
    const identity = taintIdentity(taint);
    if (seen.has(identity)) continue;
    seen.add(identity);
    result.push(
      taint.value
        ? { key: taint.key, value: taint.value, effect: taint.effect }
        : { key: taint.key, effect: taint.effect },
    );
  }
  return result;
}

// Under the NodeRestriction admission plugin a kubelet may only set labels in the kubernetes.io and
// k8s.io domains (and their subdomains) that are on this list or in the node.kubernetes.io /
// kubelet.kubernetes.io namespaces. Anything else in those domains (node-role.kubernetes.io/*,
// node-restriction.kubernetes.io/*, …) would make kubelet's registration fail; such labels are applied
// later, at registration, when the system copies the NodeClaim's labels onto the Node.
const KUBELET_ALLOWED_KEYS: ReadonlySet<string> = new Set([
  'kubernetes.io/hostname',
  'kubernetes.io/arch',
  'kubernetes.io/os',
  'beta.kubernetes.io/arch',
  'beta.kubernetes.io/os',
  'beta.kubernetes.io/instance-type',
  'node.kubernetes.io/instance-type',
  'topology.kubernetes.io/region',
  'topology.kubernetes.io/zone',
  'failure-domain.beta.kubernetes.io/region',
  'failure-domain.beta.kubernetes.io/zone',
]);
const KUBELET_ALLOWED_NAMESPACES = ['node.kubernetes.io', 'kubelet.kubernetes.io'];
const RESTRICTED_DOMAINS = ['kubernetes.io', 'k8s.io'];

// State markers the system sets once the corresponding step has happened. A kubelet announcing them at
// boot would claim a registration or initialization that has not taken place, so they are dropped too.
const SYSTEM_STATE_LABELS: ReadonlySet<string> = new Set([
  WellKnown.registeredLabel,
  WellKnown.initializedLabel,
]);

function inDomain(domain: string, parent: string): boolean {
  return domain === parent || domain.endsWith(`.${parent}`);
}

/** Whether kubelet may set this label itself (see KUBELET_ALLOWED_KEYS for the rule). */
export function isKubeletLabel(key: string): boolean {
  if (SYSTEM_STATE_LABELS.has(key)) return false;
  const slash = key.indexOf('/');
  if (slash < 0) return true;
  const domain = key.slice(0, slash);
  if (!RESTRICTED_DOMAINS.some((restricted) => inDomain(domain, restricted))) return true;
  if (KUBELET_ALLOWED_KEYS.has(key)) return true;
  return KUBELET_ALLOWED_NAMESPACES.some((namespace) => inDomain(domain, namespace));
}

/** The subset of labels kubelet may pass in --node-labels; karpenter.sh/* and kubernetes.azure.com/* pass. */
export function kubeletLabels(labels: Readonly<Record<string, string>>): Record<string, string> {
  return Object.fromEntries(Object.entries(labels).filter(([key]) => isKubeletLabel(key)));
}

export function formatTaint(taint: Taint): string {
  return taint.value ? `${taint.key}=${taint.value}:${taint.effect}` : `${taint.key}:${taint.effect}`;
}

const TAINT_EFFECTS: ReadonlySet<string> = new Set(['NoSchedule', 'PreferNoSchedule', 'NoExecute']);

export function parseTaint(text: string): Taint {
  const colon = text.lastIndexOf(':');
  if (colon < 0) throw new BootstrapParseError(`taint "${text}" has no effect`);
  const effect = text.slice(colon + 1);
  if (!TAINT_EFFECTS.has(effect)) throw new BootstrapParseError(`taint "${text}" has an unknown effect`);
  const keyValue = text.slice(0, colon);
  const equals = keyValue.indexOf('=');
  const key = equals < 0 ? keyValue : keyValue.slice(0, equals);
  const value = equals < 0 ? '' : keyValue.slice(equals + 1);
  if (key === '') throw new BootstrapParseError(`taint "${text}" has no key`);
  return value ? { key, value, effect: effect as TaintEffect } : { key, effect: effect as TaintEffect };
}

function formatLabels(labels: Readonly<Record<string, string>>): string {
  return Object.keys(labels)
    .sort()
    .map((key) => `${key}=${labels[key]}`)
    .join(',');
}

function parseLabels(text: string): Record<string, string> {
  if (text === '') return {};
  const labels: Record<string, string> = {};
  for (const pair of text.split(',')) {
    const equals = pair.indexOf('=');
    if (equals <= 0) throw new BootstrapParseError(`node label "${pair}" is not key=value`);
    labels[pair.slice(0, equals)] = pair.slice(equals + 1);
  }
  return labels;
}

// Flag values must survive systemd's whitespace splitting of $KUBELET_FLAGS; label and taint syntax
// already excludes whitespace, so this only guards against bad settings (e.g. a URL with a space).
function assertFlagSafe(name: string, value: string): void {
  if (/[\s"'\\$`]/.test(value)) {
    throw new Error(
      `kubelet flag --${name} value ${JSON.stringify(value)} contains whitespace or shell quoting`,
    );
  }
}

/** Kubelet flags derived from the AKSNodeClass kubelet configuration, in a fixed order. */
export function kubeletConfigFlags(config: KubeletConfiguration | undefined): [string, string][] {
  if (!config) return [];
  const flags: [string, string][] = [];
  if (config.cpuManagerPolicy !== undefined) flags.push(['cpu-manager-policy', config.cpuManagerPolicy]);
  if (config.cpuCFSQuota !== undefined) flags.push(['cpu-cfs-quota', String(config.cpuCFSQuota)]);
  if (config.cpuCFSQuotaPeriod !== undefined) flags.push(['cpu-cfs-quota-period', config.cpuCFSQuotaPeriod]);
  if (config.imageGCHighThresholdPercent !== undefined) {
    flags.push(['image-gc-high-threshold', String(config.imageGCHighThresholdPercent)]);
  }
  if (config.imageGCLowThresholdPercent !== undefined) {
    flags.push(['image-gc-low-threshold', String(config.imageGCLowThresholdPercent)]);
  }
  if (config.topologyManagerPolicy !== undefined)
    flags.push(['topology-manager-policy', config.topologyManagerPolicy]);
  if (config.allowedUnsafeSysctls !== undefined && config.allowedUnsafeSysctls.length > 0) {
    flags.push(['allowed-unsafe-sysctls', config.allowedUnsafeSysctls.join(',')]);
  }
  if (config.containerLogMaxSize !== undefined)
    flags.push(['container-log-max-size', config.containerLogMaxSize]);
  if (config.containerLogMaxFiles !== undefined) {
    flags.push(['container-log-max-files', String(config.containerLogMaxFiles)]);
  }
  if (config.podPidsLimit !== undefined) flags.push(['pod-max-pids', String(config.podPidsLimit)]);
  return flags;
}

function kubeletFlagList(input: BootstrapInput): [string, string][] {
  const flags: [string, string][] = [
    ['bootstrap-kubeconfig', BOOTSTRAP_PATHS.bootstrapKubeconfig],
    ['kubeconfig', BOOTSTRAP_PATHS.kubeconfig],
    ['hostname-override', input.nodeName],
    ['cloud-provider', 'external'],
    ['node-labels', formatLabels(input.nodeLabels)],
    ['register-with-taints', input.registerWithTaints.map(formatTaint).join(',')],
    ...(input.reservations ? Object.entries(input.reservations) : []),
    ...kubeletConfigFlags(input.kubeletConfig),
  ];
  for (const [name, value] of flags) assertFlagSafe(name, value);
  return flags;
}

interface KubeconfigDocument {
  apiVersion: 'v1';
  kind: 'Config';
  clusters: { name: string; cluster: { server: string; 'certificate-authority': string } }[];
  users: { name: string; user: { token: string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  'current-context': string;
}

interface WriteFile {
  path: string;
  permissions: string;
  owner: string;
  content: string;
}

interface CloudConfig {
  write_files: WriteFile[];
  runcmd: string[][];
}

/** Renders the cloud-init document for one node (see the file comment for the format). */
export function renderBootstrap(input: BootstrapInput): string {
  const flags = kubeletFlagList(input);
  const kubeconfig: KubeconfigDocument = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: input.clusterName,
        cluster: { server: input.apiServerUrl, 'certificate-authority': BOOTSTRAP_PATHS.caCert },
      },
    ],
    users: [{ name: 'kubelet-bootstrap', user: { token: input.bootstrapToken } }],
    contexts: [{ name: 'bootstrap', context: { cluster: input.clusterName, user: 'kubelet-bootstrap' } }],
    'current-context': 'bootstrap',
  };
  const envFile = `${FLAGS_VARIABLE}=${flags.map(([name, value]) => `--${name}=${value}`).join(' ')}\n`;
  const dropIn = [
    '[Service]',
    `EnvironmentFile=${BOOTSTRAP_PATHS.kubeletEnv}`,
    'ExecStart=',
    `ExecStart=${BOOTSTRAP_PATHS.kubeletBinary} $${FLAGS_VARIABLE}`,
    '',
  ].join('\n');
  const document: CloudConfig = {
    write_files: [
      { path: BOOTSTRAP_PATHS.caCert, permissions: '0644', owner: 'root:root', content: input.caCertPem },
      {
        path: BOOTSTRAP_PATHS.bootstrapKubeconfig,
        permissions: '0600',
        owner: 'root:root',
        content: JSON.stringify(kubeconfig, null, 2),
      },
      { path: BOOTSTRAP_PATHS.kubeletEnv, permissions: '0644', owner: 'root:root', content: envFile },
      { path: BOOTSTRAP_PATHS.kubeletDropIn, permissions: '0644', owner: 'root:root', content: dropIn },
    ],
    runcmd: [
      ['systemctl', 'daemon-reload'],
      ['systemctl', 'enable', '--now', 'kubelet'],
    ],
  };
  return CLOUD_CONFIG_HEADER + JSON.stringify(document, null, 2) + '\n';
}

function fileContent(document: CloudConfig, path: string): string {
  const file = document.write_files.find((f) => f.path === path);
  if (!file || typeof file.content !== 'string') throw new BootstrapParseError(`no file ${path}`);
  return file.content;
}

function parseKubeletFlags(envFile: string): Record<string, string> {
  const line = envFile.split('\n').find((l) => l.startsWith(`${FLAGS_VARIABLE}=`));
  if (line === undefined)
    throw new BootstrapParseError(`${BOOTSTRAP_PATHS.kubeletEnv} has no ${FLAGS_VARIABLE}`);
  const flags: Record<string, string> = {};
  for (const token of line.slice(FLAGS_VARIABLE.length + 1).split(' ')) {
    if (token === '') continue;
    const match = /^--([^=]+)=(.*)$/.exec(token);
    if (!match) throw new BootstrapParseError(`kubelet argument "${token}" is not --name=value`);
    flags[match[1] as string] = match[2] as string;
  }
  return flags;
}

/** Reads a document produced by renderBootstrap back into its inputs. Throws BootstrapParseError. */
export function parseBootstrap(text: string): ParsedBootstrap {
  if (!text.startsWith(CLOUD_CONFIG_HEADER))
    throw new BootstrapParseError('does not start with #cloud-config');
  let document: CloudConfig;
  try {
    document = JSON.parse(text.slice(CLOUD_CONFIG_HEADER.length)) as CloudConfig;
  } catch (error) {
    throw new BootstrapParseError(`not the JSON form this project renders: ${(error as Error).message}`);
  }
  if (!Array.isArray(document?.write_files)) throw new BootstrapParseError('no write_files');
  let kubeconfig: KubeconfigDocument;
  try {
    kubeconfig = JSON.parse(fileContent(document, BOOTSTRAP_PATHS.bootstrapKubeconfig)) as KubeconfigDocument;
  } catch (error) {
    if (error instanceof BootstrapParseError) throw error;
    throw new BootstrapParseError(`bootstrap kubeconfig is not JSON: ${(error as Error).message}`);
  }
  const cluster = kubeconfig.clusters?.[0];
  const user = kubeconfig.users?.[0];
  if (!cluster || !user) throw new BootstrapParseError('bootstrap kubeconfig has no cluster or user');
  const kubeletFlags = parseKubeletFlags(fileContent(document, BOOTSTRAP_PATHS.kubeletEnv));
  const taints = kubeletFlags['register-with-taints'] ?? '';
  const nodeName = kubeletFlags['hostname-override'];
  if (nodeName === undefined) throw new BootstrapParseError('kubelet flags have no --hostname-override');
  return {
    clusterName: cluster.name,
    apiServerUrl: cluster.cluster.server,
    caCertPem: fileContent(document, BOOTSTRAP_PATHS.caCert),
    bootstrapToken: user.user.token,
    nodeName,
    registerWithTaints: taints === '' ? [] : taints.split(',').map(parseTaint),
    nodeLabels: parseLabels(kubeletFlags['node-labels'] ?? ''),
    kubeletFlags,
  };
}

/** Base64 of the UTF-8 text, as the VM's osProfile.customData expects. Throws when Azure would refuse it. */
export function encodeCustomData(text: string): string {
  const bytes = Buffer.from(text, 'utf8');
  if (bytes.length > MAX_CUSTOM_DATA_BYTES) {
    throw new RangeError(
      `custom data is ${bytes.length} bytes; Azure accepts at most ${MAX_CUSTOM_DATA_BYTES}`,
    );
  }
  return bytes.toString('base64');
}

export function decodeCustomData(base64: string): string {
  return Buffer.from(base64, 'base64').toString('utf8');
}
