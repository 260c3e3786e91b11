// The parts of a node's bootstrap data that do not depend on its format: the taints kubelet registers
// with (the registration race in docs/design.md), the labels kubelet may set itself, kubelet flags from the
// AKSNodeClass, and the custom data encoding. The format itself is aks-node-config.ts.
import type { KubeletConfiguration } from '../../../models/aks-node-class.js';
import type { NodeClaimSpec } from '../../../models/karpenter.js';
import type { Taint, TaintEffect } from '../../../models/kube.js';
import { WellKnown } from '../../../models/karpenter.js';
import { KUBELET_FIELD_PARSERS, parsedOrThrow, type Parsed } from './nodeclass-validation.js';

/** Azure accepts at most 65,535 bytes of custom data (before base64). */
export const MAX_CUSTOM_DATA_BYTES = 65_535;

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

// Each AKSNodeClass kubelet field with the flag it becomes and how its parsed value is written.
const KUBELET_CONFIG_FLAGS: ReadonlyArray<{
  field: keyof typeof KUBELET_FIELD_PARSERS & keyof KubeletConfiguration;
  flag: string;
  write: (parsed: unknown) => string;
}> = [
  { field: 'cpuManagerPolicy', flag: 'cpu-manager-policy', write: String },
  { field: 'cpuCFSQuota', flag: 'cpu-cfs-quota', write: String },
  { field: 'cpuCFSQuotaPeriod', flag: 'cpu-cfs-quota-period', write: String },
  { field: 'imageGCHighThresholdPercent', flag: 'image-gc-high-threshold', write: String },
  { field: 'imageGCLowThresholdPercent', flag: 'image-gc-low-threshold', write: String },
  { field: 'topologyManagerPolicy', flag: 'topology-manager-policy', write: String },
  {
    field: 'allowedUnsafeSysctls',
    flag: 'allowed-unsafe-sysctls',
    write: (names) => (names as string[]).join(','),
  },
  { field: 'containerLogMaxSize', flag: 'container-log-max-size', write: String },
  { field: 'containerLogMaxFiles', flag: 'container-log-max-files', write: String },
  { field: 'podPidsLimit', flag: 'pod-max-pids', write: String },
];

/**
 * Kubelet flags derived from the AKSNodeClass kubelet configuration, in a fixed order. Each value is
 * parsed by its field's type (nodeclass-validation.ts) and written from the parsed value, never pasted:
 * a value that does not parse throws NodeClassFieldError naming the field, so no flag is made of it.
 * An empty sysctl list sets no flag.
 */
export function kubeletConfigFlags(config: KubeletConfiguration | undefined): [string, string][] {
  if (!config) return [];
  const flags: [string, string][] = [];
  for (const { field, flag, write } of KUBELET_CONFIG_FLAGS) {
    const value: unknown = config[field];
    if (value === undefined) continue;
    if (Array.isArray(value) && value.length === 0) continue;
    const parse: (value: unknown) => Parsed<unknown> = KUBELET_FIELD_PARSERS[field];
    const parsed = parsedOrThrow(`spec.kubelet.${field}`, parse(value));
    flags.push([flag, write(parsed)]);
  }
  return flags;
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
