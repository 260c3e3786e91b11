// Every AKSNodeClass value that reaches a node, parsed by its type before a launch uses it. The API
// server's schema leaves several of them free text (kubelet.cpuCFSQuotaPeriod, allowedUnsafeSysctls,
// podPidsLimit, the VNet and subnet names inside vnetSubnetID), and the AKS node image joins the kubelet
// flags into KUBELET_FLAGS and expands it unquoted: a value with a space in it would become more kubelet
// flags. So nothing is pasted through. Each field has a parser for its type (a Go duration in the
// kernel's CFS period range, a sysctl pattern kubelet accepts, a quantity kubelet can read, an integer in
// range, one of an enum's values, an ARM subnet ID by Azure's naming rules, Azure's tag rules), the table
// FIELD_RULES names every field with its parser, and a value either parses, and is then written in a
// form that is one word on any command line, or is reported with its field path and why. The same
// parsers check the fields no launch sends yet (linuxOSConfig, localDNS, …), so wiring one up later
// cannot forget them. Pure: no I/O.
import type { AKSNodeClass } from '../../../models/aks-node-class.js';
import { parseGoDuration } from '../../../decisions/go-values.js';

/** One field that does not parse: its path in the object (e.g. spec.kubelet.cpuCFSQuotaPeriod) and why. */
export interface FieldProblem {
  path: string;
  problem: string;
}

export type Parsed<T> = { value: T } | { problem: string };

const ok = <T>(value: T): Parsed<T> => ({ value });
const bad = (problem: string): Parsed<never> => ({ problem });

/** The value as a message names it: JSON-quoted (so a newline or quote shows as such), and short. */
export function describeValue(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 80 ? `${text.slice(0, 77)}...` : text;
}

// ---------------------------------------------------------------------------------------------------
// Parsers, one per field type.

export function parseBoolean(value: unknown): Parsed<boolean> {
  return typeof value === 'boolean' ? ok(value) : bad(`${describeValue(value)} is not true or false`);
}

export function parseEnum<T extends string>(allowed: readonly T[]): (value: unknown) => Parsed<T> {
  return (value) =>
    typeof value === 'string' && (allowed as readonly string[]).includes(value)
      ? ok(value as T)
      : bad(`${describeValue(value)} is not one of ${allowed.join(', ')}`);
}

/** A whole number in [min, max]: what the CRD's int32/int64 fields with their bounds hold. */
export function parseInteger(min: number, max: number): (value: unknown) => Parsed<number> {
  return (value) => {
    if (typeof value !== 'number' || !Number.isSafeInteger(value))
      return bad(`${describeValue(value)} is not a whole number`);
    if (value < min || value > max) return bad(`${value} is not between ${min} and ${max}`);
    return ok(value);
  };
}

const NS_PER_MS = 1_000_000n;

/**
 * A Go duration (time.ParseDuration, as kubelet reads a metav1.Duration) within [minMs, maxMs], written
 * back in ASCII ("µs" as "us"): the parse leaves only digits, ".", "+" and unit letters in it.
 */
export function parseDurationWithin(minMs: number, maxMs: number): (value: unknown) => Parsed<string> {
  return (value) => {
    if (typeof value !== 'string') return bad(`${describeValue(value)} is not a duration`);
    const parsed = parseGoDuration(value);
    if ('error' in parsed) return bad(`${describeValue(value)} is not a duration (${parsed.error})`);
    if (parsed.ns < BigInt(minMs) * NS_PER_MS || parsed.ns > BigInt(maxMs) * NS_PER_MS)
      return bad(`${describeValue(value)} is not between ${formatMs(minMs)} and ${formatMs(maxMs)}`);
    return ok(value.replace(/[\u00b5\u03bc]s/g, 'us'));
  };
}

function formatMs(ms: number): string {
  return ms >= 1000 && ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`;
}

// Kubernetes' sysctl name rules (pkg/apis/core/validation SysctlSegmentFmt and pkg/apis/policy/validation
// IsValidSysctlPattern): dot- or slash-separated segments of lower-case letters, digits, "-" and "_",
// the last of which may end in "*"; at most 253 characters.
const SYSCTL_SEGMENT = '[a-z0-9]([-_a-z0-9]*[a-z0-9])?';
const SYSCTL_PATTERN = new RegExp(`^(${SYSCTL_SEGMENT}[./])*([a-z0-9][-_a-z0-9]*)?[a-z0-9*]$`);
const SYSCTL_MAX_LENGTH = 253;
// kubelet allows only sysctls the kernel namespaces per pod (pkg/kubelet/sysctl: kernel.sem exactly;
// kernel.shm*, kernel.msg*, fs.mqueue.*, net.* by prefix) and refuses to start with any other.
const NAMESPACED_SYSCTLS: ReadonlySet<string> = new Set(['kernel.sem']);
const NAMESPACED_SYSCTL_PREFIXES = ['kernel.shm', 'kernel.msg', 'fs.mqueue.', 'net.'];

/** "net/ipv4/ip_forward" as kubelet reads it ("net.ipv4.ip_forward"): slash-separated names swap . and /. */
function dotSeparated(name: string): string {
  const first = name.search(/[./]/);
  if (first < 0 || name[first] === '.') return name;
  return name.replace(/[./]/g, (c) => (c === '/' ? '.' : '/'));
}

export function parseSysctlPattern(value: unknown): Parsed<string> {
  if (typeof value !== 'string') return bad(`${describeValue(value)} is not a sysctl name`);
  if (value.length > SYSCTL_MAX_LENGTH || !SYSCTL_PATTERN.test(value))
    return bad(
      `${describeValue(value)} is not a sysctl name or pattern (lower-case segments separated by "." or "/", a trailing "*" at most)`,
    );
  const name = dotSeparated(value);
  const prefix = name.endsWith('*') ? name.slice(0, -1) : undefined;
  const namespaced =
    prefix === undefined
      ? NAMESPACED_SYSCTLS.has(name) || NAMESPACED_SYSCTL_PREFIXES.some((p) => name.startsWith(p))
      : NAMESPACED_SYSCTL_PREFIXES.some((p) => prefix.startsWith(p));
  if (!namespaced)
    return bad(
      `${describeValue(value)} is not a namespaced sysctl kubelet can allow (kernel.shm*, kernel.msg*, kernel.sem, fs.mqueue.*, net.*)`,
    );
  return ok(name);
}

export function parseSysctlPatterns(value: unknown): Parsed<string[]> {
  if (!Array.isArray(value)) return bad(`${describeValue(value)} is not a list of sysctl names`);
  const names: string[] = [];
  for (const [index, item] of value.entries()) {
    const parsed = parseSysctlPattern(item);
    if ('problem' in parsed) return bad(`item ${index}: ${parsed.problem}`);
    names.push(parsed.value);
  }
  return ok(names);
}

// The CRD's pattern for sizes. kubelet reads containerLogMaxSize as a resource.Quantity, which has no
// "K" suffix (only "Ki" and "k", and the CRD does not allow "k"): "10K" passes the API server and stops
// kubelet, so the kubelet field refuses it.
const CRD_SIZE = /^(\d+)(E|P|T|G|M|K|Ei|Pi|Ti|Gi|Mi|Ki)$/;

/** A size kubelet reads as a quantity (containerLogMaxSize): digits and a suffix, more than 0. */
export function parseKubeletQuantitySize(value: unknown): Parsed<string> {
  if (typeof value !== 'string') return bad(`${describeValue(value)} is not a size`);
  const match = CRD_SIZE.exec(value);
  if (!match)
    return bad(
      `${describeValue(value)} is not a size (digits and one of Ki, Mi, Gi, Ti, Pi, Ei, M, G, T, P, E)`,
    );
  if (match[2] === 'K') return bad(`${describeValue(value)} uses "K", which kubelet does not read (use Ki)`);
  if (/^0+$/.test(match[1] ?? '')) return bad(`${describeValue(value)} is not more than 0`);
  return ok(value);
}

/** A size in the CRD's pattern (linuxOSConfig.swapFileSize). */
export function parseCrdSize(value: unknown): Parsed<string> {
  return typeof value === 'string' && CRD_SIZE.test(value)
    ? ok(value)
    : bad(
        `${describeValue(value)} is not a size (digits and one of Ki, Mi, Gi, Ti, Pi, Ei, K, M, G, T, P, E)`,
      );
}

/** The parts of an ARM subnet ID a node is told (its VNet's resource group, the VNet, the subnet). */
export interface SubnetRef {
  subscriptionId: string;
  resourceGroup: string;
  vnetName: string;
  subnetName: string;
}

// Azure's naming rules (Microsoft.Resources and Microsoft.Network): a subscription is a GUID; a resource
// group 1–90 of letters, digits, "_", "-", ".", "(" and ")" not ending in "." (the CRD's ASCII form of
// it); a VNet 2–64 and a subnet 1–80 of letters, digits, "_", "." and "-", starting with a letter or
// digit and ending with one or "_".
const SUBNET_ID =
  /^\/subscriptions\/([0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12})\/resourceGroups\/([A-Za-z0-9_\-().]{0,89}[A-Za-z0-9_\-()])\/providers\/Microsoft\.Network\/virtualNetworks\/([A-Za-z0-9][A-Za-z0-9_.-]{0,62}[A-Za-z0-9_])\/subnets\/([A-Za-z0-9](?:[A-Za-z0-9_.-]{0,78}[A-Za-z0-9_])?)$/i;

export function parseSubnetId(value: unknown): Parsed<SubnetRef> {
  if (typeof value !== 'string') return bad(`${describeValue(value)} is not a subnet ID`);
  const match = SUBNET_ID.exec(value);
  if (!match)
    return bad(
      `${describeValue(value)} is not a subnet ID (/subscriptions/<GUID>/resourceGroups/<group>/providers/Microsoft.Network/virtualNetworks/<vnet>/subnets/<subnet>, names as Azure allows them)`,
    );
  const [, subscriptionId = '', resourceGroup = '', vnetName = '', subnetName = ''] = match;
  return ok({ subscriptionId, resourceGroup, vnetName, subnetName });
}

// Azure's tag rules: at most 50 tags a resource (the VM carries 3 of its own here), names of at most 512
// characters without < > % & \ ? /, values of at most 256. A '/' is allowed here: the VM body writes it
// as '_', as the Azure provider does (karpenter.sh/nodepool becomes karpenter.sh_nodepool). Control
// characters are refused in both: no tag needs one, and a log or portal showing them would mislead.
const MAX_CLASS_TAGS = 47;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;

export function parseTags(value: unknown): Parsed<Record<string, string>> {
  if (typeof value !== 'object' || value === null || Array.isArray(value))
    return bad(`${describeValue(value)} is not a map of tags`);
  const entries = Object.entries(value as Record<string, unknown>);
  if (entries.length > MAX_CLASS_TAGS)
    return bad(`${entries.length} tags; a VM takes ${MAX_CLASS_TAGS} besides the 3 the system puts on it`);
  for (const [name, tagValue] of entries) {
    if (name === '' || name.length > 512 || /[<>%&\\?]/.test(name) || CONTROL.test(name))
      return bad(
        `tag name ${describeValue(name)} is not a tag name (1–512 characters, none of < > % & \\ ? or control characters)`,
      );
    if (typeof tagValue !== 'string' || tagValue.length > 256 || CONTROL.test(tagValue))
      return bad(
        `tag ${describeValue(name)}: ${describeValue(tagValue)} is not a tag value (a string of at most 256 characters, no control characters)`,
      );
  }
  return ok(Object.fromEntries(entries) as Record<string, string>);
}

// The CRD's patterns for LocalDNS.
const LOCAL_DNS_DURATION = /^([0-9]+(s|m|h))+$/;
const DNS_ZONE =
  /^(\.|[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9_-]{0,61}[A-Za-z0-9])?)*\.?)$/;

export function parseLocalDnsDuration(value: unknown): Parsed<string> {
  return typeof value === 'string' && LOCAL_DNS_DURATION.test(value)
    ? ok(value)
    : bad(`${describeValue(value)} is not a duration of whole s, m or h`);
}

export function parseDnsZone(value: unknown): Parsed<string> {
  return typeof value === 'string' && value.length <= 254 && DNS_ZONE.test(value)
    ? ok(value)
    : bad(`${describeValue(value)} is not a DNS zone`);
}

/** "first last": two ports, first in [1024, 60999], last in [32768, 65535], first ≤ last (the CRD's rules). */
export function parsePortRange(value: unknown): Parsed<string> {
  const match = typeof value === 'string' ? /^(\d+) (\d+)$/.exec(value) : null;
  if (!match) return bad(`${describeValue(value)} is not "<first port> <last port>"`);
  const first = Number(match[1]);
  const last = Number(match[2]);
  if (first < 1024 || first > 60999 || last < 32768 || last > 65535 || first > last)
    return bad(
      `${describeValue(value)} is not a range with its first port in 1024–60999, its last in 32768–65535`,
    );
  return ok(value as string);
}

function parseObject(value: unknown): Parsed<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value)
    ? ok(value as Record<string, unknown>)
    : bad(`${describeValue(value)} is not an object`);
}

// ---------------------------------------------------------------------------------------------------
// The fields.

type Parser = (value: unknown) => Parsed<unknown>;

export const IMAGE_FAMILIES = ['Ubuntu', 'Ubuntu2204', 'Ubuntu2404', 'AzureLinux'] as const;

/**
 * The kernel's bounds for a CFS period (sched: 1 ms to 1 s); kubelet passes the value to the kernel's
 * cpu.cfs_period_us (cgroup v1) or cpu.max (v2), which refuses anything outside them.
 */
export const CPU_CFS_QUOTA_PERIOD_MS = { min: 1, max: 1_000 } as const;
/** Linux's PID_MAX_LIMIT on 64-bit: no pod can have more processes than the kernel has PIDs. */
export const MAX_POD_PIDS = 4_194_304;
const INT32_MAX = 2_147_483_647;

/** The kubelet fields and their parsers; also what bootstrap.ts writes each flag from. */
export const KUBELET_FIELD_PARSERS = {
  cpuManagerPolicy: parseEnum(['none', 'static'] as const),
  cpuCFSQuota: parseBoolean,
  cpuCFSQuotaPeriod: parseDurationWithin(CPU_CFS_QUOTA_PERIOD_MS.min, CPU_CFS_QUOTA_PERIOD_MS.max),
  imageGCHighThresholdPercent: parseInteger(0, 100),
  imageGCLowThresholdPercent: parseInteger(0, 100),
  topologyManagerPolicy: parseEnum(['restricted', 'best-effort', 'none', 'single-numa-node'] as const),
  allowedUnsafeSysctls: parseSysctlPatterns,
  containerLogMaxSize: parseKubeletQuantitySize,
  // kubelet needs at least 2 (one being written, one rotated); the CRD's int32 bounds the rest.
  containerLogMaxFiles: parseInteger(2, INT32_MAX),
  // -1 (and 0) mean no limit to kubelet.
  podPidsLimit: parseInteger(-1, MAX_POD_PIDS),
  failSwapOn: parseBoolean,
  maxPods: parseInteger(10, 250),
} as const satisfies Record<string, Parser>;

// linuxOSConfig.sysctls by their AKS names, with the CRD's bounds.
const LINUX_SYSCTL_RANGES: Readonly<Record<string, readonly [number, number]>> = {
  fsAioMaxNr: [65536, 6553500],
  fsFileMax: [8192, 12000500],
  fsInotifyMaxUserWatches: [781250, 2097152],
  fsNrOpen: [8192, 20000500],
  kernelThreadsMax: [20, 513785],
  netCoreNetdevMaxBacklog: [1000, 3240000],
  netCoreOptmemMax: [20480, 4194304],
  netCoreRmemDefault: [212992, 134217728],
  netCoreRmemMax: [212992, 134217728],
  netCoreSomaxconn: [4096, 3240000],
  netCoreWmemDefault: [212992, 134217728],
  netCoreWmemMax: [212992, 134217728],
  netIPv4NeighDefaultGcThresh1: [128, 80000],
  netIPv4NeighDefaultGcThresh2: [512, 90000],
  netIPv4NeighDefaultGcThresh3: [1024, 100000],
  netIPv4TCPFinTimeout: [5, 120],
  netIPv4TCPKeepaliveIntvl: [10, 90],
  netIPv4TCPKeepaliveProbes: [1, 15],
  netIPv4TCPKeepaliveTime: [30, 432000],
  netIPv4TCPMaxSynBacklog: [128, 3240000],
  netIPv4TCPMaxTwBuckets: [8000, 1440000],
  netNetfilterNfConntrackBuckets: [65536, 524288],
  netNetfilterNfConntrackMax: [131072, 2097152],
  vmMaxMapCount: [65530, 262144],
  vmSwappiness: [0, 100],
  vmVfsCachePressure: [0, 100],
};

const LINUX_SYSCTL_PARSERS: Readonly<Record<string, Parser>> = {
  ...Object.fromEntries(
    Object.entries(LINUX_SYSCTL_RANGES).map(([name, [min, max]]) => [name, parseInteger(min, max)]),
  ),
  netIPv4IPLocalPortRange: parsePortRange,
  netIPv4TCPTwReuse: parseBoolean,
};

const LOCAL_DNS_OVERRIDE_PARSERS: Readonly<Record<string, Parser>> = {
  zone: parseDnsZone,
  cacheDuration: parseLocalDnsDuration,
  serveStaleDuration: parseLocalDnsDuration,
  forwardDestination: parseEnum(['ClusterCoreDNS', 'VnetDNS'] as const),
  forwardPolicy: parseEnum(['Sequential', 'RoundRobin', 'Random'] as const),
  maxConcurrent: parseInteger(0, INT32_MAX),
  protocol: parseEnum(['PreferUDP', 'ForceTCP'] as const),
  queryLogging: parseEnum(['Error', 'Log'] as const),
  serveStale: parseEnum(['Verify', 'Immediate', 'Disable'] as const),
};

/** Where a field's value goes: into the custom data the node boots from, into the VM body, or nowhere yet. */
export type FieldReach = 'custom data' | 'VM body' | 'custom data and VM body' | 'not sent';

export interface FieldRule {
  /** Path under the AKSNodeClass, e.g. spec.kubelet.cpuCFSQuotaPeriod. */
  path: string;
  parse: Parser;
  reach: FieldReach;
}

const kubeletRules: FieldRule[] = Object.entries(KUBELET_FIELD_PARSERS).map(([name, parse]) => ({
  path: `spec.kubelet.${name}`,
  parse,
  // failSwapOn is checked against the CRD rule with swapFileSize but not passed to kubelet.
  reach: name === 'failSwapOn' ? 'not sent' : name === 'maxPods' ? 'custom data and VM body' : 'custom data',
}));

/**
 * Every field of the AKSNodeClass spec with its parser, objects before their fields. A path part ending
 * in "[]" is checked for every item of that list.
 */
export const FIELD_RULES: readonly FieldRule[] = [
  { path: 'spec.imageFamily', parse: parseEnum(IMAGE_FAMILIES), reach: 'custom data and VM body' },
  { path: 'spec.osDiskSizeGB', parse: parseInteger(30, 2048), reach: 'VM body' },
  { path: 'spec.vnetSubnetID', parse: parseSubnetId, reach: 'custom data and VM body' },
  { path: 'spec.tags', parse: parseTags, reach: 'VM body' },
  { path: 'spec.maxPods', parse: parseInteger(10, 250), reach: 'custom data and VM body' },
  { path: 'spec.kubelet', parse: parseObject, reach: 'custom data' },
  ...kubeletRules,
  { path: 'spec.fipsMode', parse: parseEnum(['FIPS', 'Disabled'] as const), reach: 'not sent' },
  { path: 'spec.gpu', parse: parseObject, reach: 'not sent' },
  { path: 'spec.gpu.mode', parse: parseEnum(['Driver', 'None'] as const), reach: 'not sent' },
  { path: 'spec.artifactStreaming', parse: parseObject, reach: 'not sent' },
  { path: 'spec.artifactStreaming.enabled', parse: parseBoolean, reach: 'not sent' },
  { path: 'spec.security', parse: parseObject, reach: 'not sent' },
  { path: 'spec.security.encryptionAtHost', parse: parseBoolean, reach: 'not sent' },
  { path: 'spec.security.trustedLaunch', parse: parseObject, reach: 'not sent' },
  { path: 'spec.security.trustedLaunch.secureBoot', parse: parseBoolean, reach: 'not sent' },
  { path: 'spec.security.trustedLaunch.vtpm', parse: parseBoolean, reach: 'not sent' },
  { path: 'spec.linuxOSConfig', parse: parseObject, reach: 'not sent' },
  { path: 'spec.linuxOSConfig.swapFileSize', parse: parseCrdSize, reach: 'not sent' },
  {
    path: 'spec.linuxOSConfig.transparentHugePageDefrag',
    parse: parseEnum(['always', 'defer', 'defer+madvise', 'madvise', 'never'] as const),
    reach: 'not sent',
  },
  {
    path: 'spec.linuxOSConfig.transparentHugePageEnabled',
    parse: parseEnum(['always', 'madvise', 'never'] as const),
    reach: 'not sent',
  },
  // Each key by its own parser: linuxSysctlProblems.
  { path: 'spec.linuxOSConfig.sysctls', parse: parseObject, reach: 'not sent' },
  { path: 'spec.localDNS', parse: parseObject, reach: 'not sent' },
  {
    path: 'spec.localDNS.mode',
    parse: parseEnum(['Preferred', 'Required', 'Disabled'] as const),
    reach: 'not sent',
  },
  ...['kubeDNSOverrides', 'vnetDNSOverrides'].flatMap((list): FieldRule[] => [
    { path: `spec.localDNS.${list}`, parse: parseList, reach: 'not sent' },
    { path: `spec.localDNS.${list}[]`, parse: parseObject, reach: 'not sent' },
    ...Object.entries(LOCAL_DNS_OVERRIDE_PARSERS).map(([field, parse]) => ({
      path: `spec.localDNS.${list}[].${field}`,
      parse,
      reach: 'not sent' as const,
    })),
  ]),
];

function parseList(value: unknown): Parsed<unknown[]> {
  return Array.isArray(value) ? ok(value) : bad(`${describeValue(value)} is not a list`);
}

/** The values at a rule's path, each with its concrete path (list items as [i]). */
function valuesAt(root: unknown, path: string): { path: string; value: unknown }[] {
  let found: { path: string; value: unknown }[] = [{ path: '', value: root }];
  for (const part of path.split('.')) {
    const next: { path: string; value: unknown }[] = [];
    for (const { path: at, value } of found) {
      if (typeof value !== 'object' || value === null) continue;
      const list = part.endsWith('[]');
      const key = list ? part.slice(0, -2) : part;
      const item = (value as Record<string, unknown>)[key];
      if (item === undefined) continue;
      const here = at === '' ? key : `${at}.${key}`;
      if (!list) next.push({ path: here, value: item });
      else if (Array.isArray(item))
        item.forEach((element, i) => next.push({ path: `${here}[${i}]`, value: element }));
    }
    found = next;
  }
  return found;
}

/** The defaults aks-node-config.ts writes for kubelet's image GC when the class sets neither. */
export const IMAGE_GC_DEFAULTS = { high: 85, low: 80 } as const;

/** linuxOSConfig.sysctls, each key by its own bounds; a key the CRD does not know is refused. */
function linuxSysctlProblems(nodeClass: AKSNodeClass): FieldProblem[] {
  const sysctls: unknown = nodeClass.spec.linuxOSConfig?.sysctls;
  if (typeof sysctls !== 'object' || sysctls === null || Array.isArray(sysctls)) return [];
  const problems: FieldProblem[] = [];
  for (const [name, value] of Object.entries(sysctls)) {
    const path = `spec.linuxOSConfig.sysctls.${name}`;
    const parse = LINUX_SYSCTL_PARSERS[name];
    const parsed = parse ? parse(value) : bad(`${describeValue(name)} is not a sysctl AKSNodeClass knows`);
    if ('problem' in parsed) problems.push({ path, problem: parsed.problem });
  }
  return problems;
}

/** Rules between fields, checked once each field parsed on its own. */
function crossFieldProblems(nodeClass: AKSNodeClass): FieldProblem[] {
  const problems: FieldProblem[] = [];
  const kubelet = nodeClass.spec.kubelet;
  const high = kubelet?.imageGCHighThresholdPercent;
  const low = kubelet?.imageGCLowThresholdPercent;
  // kubelet refuses to start unless low < high; one set alone is paired with the other's default.
  if (
    (high !== undefined || low !== undefined) &&
    (high ?? IMAGE_GC_DEFAULTS.high) <= (low ?? IMAGE_GC_DEFAULTS.low)
  ) {
    problems.push({
      path:
        high !== undefined
          ? 'spec.kubelet.imageGCHighThresholdPercent'
          : 'spec.kubelet.imageGCLowThresholdPercent',
      problem: `imageGCHighThresholdPercent (${high ?? `${IMAGE_GC_DEFAULTS.high}, the default`}) must be greater than imageGCLowThresholdPercent (${low ?? `${IMAGE_GC_DEFAULTS.low}, the default`})`,
    });
  }
  if (nodeClass.spec.linuxOSConfig?.swapFileSize !== undefined && kubelet?.failSwapOn !== false) {
    problems.push({
      path: 'spec.kubelet.failSwapOn',
      problem: 'must be false when spec.linuxOSConfig.swapFileSize is set',
    });
  }
  return problems;
}

/** Every field of the class that does not parse, in FIELD_RULES order; [] when the class is valid. */
export function nodeClassProblems(nodeClass: AKSNodeClass): FieldProblem[] {
  const spec: unknown = nodeClass.spec;
  if (typeof spec !== 'object' || spec === null || Array.isArray(spec))
    return [{ path: 'spec', problem: `${describeValue(spec)} is not an object` }];
  const problems: FieldProblem[] = [];
  // A field inside one that is not an object is not reached: valuesAt stops at the parent.
  for (const rule of FIELD_RULES) {
    for (const { path, value } of valuesAt({ spec }, rule.path)) {
      const parsed = rule.parse(value);
      if ('problem' in parsed) problems.push({ path, problem: parsed.problem });
    }
  }
  problems.push(...linuxSysctlProblems(nodeClass));
  return problems.length > 0 ? problems : crossFieldProblems(nodeClass);
}

/** One line for a condition or event: "spec.kubelet.cpuCFSQuotaPeriod: … ; spec.tags: …". */
export function describeFieldProblems(problems: readonly FieldProblem[]): string {
  return problems.map((p) => `${p.path}: ${p.problem}`).join('; ');
}

/** A field that does not parse, at the point of writing it: the launch should have refused the class. */
export class NodeClassFieldError extends Error {
  override readonly name = 'NodeClassFieldError';
  constructor(readonly problems: readonly FieldProblem[]) {
    super(`AKSNodeClass is invalid: ${describeFieldProblems(problems)}`);
  }
}

/** The parsed value, or NodeClassFieldError naming the path. */
export function parsedOrThrow<T>(path: string, parsed: Parsed<T>): T {
  if ('problem' in parsed) throw new NodeClassFieldError([{ path, problem: parsed.problem }]);
  return parsed.value;
}

/** Throws NodeClassFieldError listing every field of the class that does not parse. */
export function assertValidNodeClass(nodeClass: AKSNodeClass): void {
  const problems = nodeClassProblems(nodeClass);
  if (problems.length > 0) throw new NodeClassFieldError(problems);
}

// Characters a kubelet flag value may hold so that it stays one word wherever KUBELET_FLAGS is expanded
// (systemd's ExecStart, a shell): no whitespace, quotes, "$", "`", "\", ";", "&", "|", "(", ")", "#",
// "!", "~", "?", "[" or non-ASCII. "<" and "%" are in --eviction-hard's thresholds, "*" in sysctl patterns.
const FLAG_VALUE_WORD = /^[A-Za-z0-9._:,=/+@*%<-]*$/;

/** Whether a kubelet flag value stays one word unquoted. */
export function isFlagWord(value: string): boolean {
  return FLAG_VALUE_WORD.test(value);
}
