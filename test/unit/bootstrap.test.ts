import { describe, expect, it } from 'vitest';
import type { Taint } from '../../shared/models/kube.js';
import {
  BootstrapParseError,
  MAX_CUSTOM_DATA_BYTES,
  decodeCustomData,
  encodeCustomData,
  isKubeletLabel,
  kubeletLabels,
  parseBootstrap,
  parseTaint,
  formatTaint,
  registrationTaints,
  renderBootstrap,
  type BootstrapInput,
} from '../../shared/decisions/bootstrap.js';

const CA =
  '-----BEGIN CERTIFICATE-----\nMIIBszCCAVmgAwIBAgIUQ2\n"quoted" and \\backslash\n-----END CERTIFICATE-----\n';

function input(overrides: Partial<BootstrapInput> = {}): BootstrapInput {
  return {
    clusterName: 'prod',
    apiServerUrl: 'https://prod-dns-abc.hcp.westus2.azmk8s.io:443',
    caCertPem: CA,
    bootstrapToken: 'abcdef.0123456789abcdef',
    nodeName: 'aks-default-x7k2p',
    registerWithTaints: registrationTaints({
      spec: {
        taints: [{ key: 'dedicated', value: 'gpu', effect: 'NoSchedule' }],
        startupTaints: [{ key: 'example.com/not-ready', effect: 'NoExecute' }],
      },
    }),
    nodeLabels: {
      'karpenter.sh/nodepool': 'default',
      'karpenter.sh/capacity-type': 'spot',
      'node.kubernetes.io/instance-type': 'Standard_D2s_v5',
      'topology.kubernetes.io/zone': 'westus2-1',
      team: '',
    },
    ...overrides,
  };
}

describe('registrationTaints', () => {
  it.each<[string, { taints?: Taint[]; startupTaints?: Taint[] }, string[]]>([
    ['only the unregistered taint', {}, ['karpenter.sh/unregistered:NoExecute']],
    [
      'unregistered first, then taints, then startup taints',
      {
        taints: [{ key: 'a', value: '1', effect: 'NoSchedule' }],
        startupTaints: [{ key: 'b', effect: 'NoExecute' }],
      },
      ['karpenter.sh/unregistered:NoExecute', 'a=1:NoSchedule', 'b:NoExecute'],
    ],
    [
      'deduplicated by key and effect, first wins',
      {
        taints: [
          { key: 'karpenter.sh/unregistered', value: 'x', effect: 'NoExecute' },
          { key: 'a', value: '1', effect: 'NoSchedule' },
          { key: 'a', value: '1', effect: 'NoExecute' },
        ],
        startupTaints: [{ key: 'a', value: '2', effect: 'NoSchedule' }],
      },
      ['karpenter.sh/unregistered:NoExecute', 'a=1:NoSchedule', 'a=1:NoExecute'],
    ],
    [
      'empty values and timeAdded are dropped',
      { taints: [{ key: 'c', value: '', effect: 'PreferNoSchedule', timeAdded: '2024-01-01T00:00:00Z' }] },
      ['karpenter.sh/unregistered:NoExecute', 'c:PreferNoSchedule'],
    ],
  ])('%s', (_name, spec, expected) => {
    const taints = registrationTaints({ spec });
    expect(taints.map(formatTaint)).toEqual(expected);
    expect(taints.every((t) => t.timeAdded === undefined && t.value !== '')).toBe(true);
  });
});

describe('kubeletLabels', () => {
  it.each<[string, boolean]>([
    ['karpenter.sh/nodepool', true],
    ['karpenter.sh/capacity-type', true],
    ['kubernetes.azure.com/agentpool', true],
    ['karpenter.azure.com/sku-family', true],
    ['team', true],
    ['kubernetes.io/hostname', true],
    ['kubernetes.io/arch', true],
    ['kubernetes.io/os', true],
    ['node.kubernetes.io/instance-type', true],
    ['node.kubernetes.io/custom', true],
    ['kubelet.kubernetes.io/anything', true],
    ['x.node.kubernetes.io/y', true],
    ['topology.kubernetes.io/zone', true],
    ['topology.kubernetes.io/region', true],
    ['failure-domain.beta.kubernetes.io/zone', true],
    ['beta.kubernetes.io/instance-type', true],
    ['node-role.kubernetes.io/worker', false],
    ['node-restriction.kubernetes.io/secure', false],
    ['kubernetes.io/custom', false],
    ['topology.kubernetes.io/rack', false],
    ['example.k8s.io/x', false],
    ['k8s.io/x', false],
    ['karpenter.sh/registered', false],
    ['karpenter.sh/initialized', false],
  ])('%s allowed: %s', (key, allowed) => {
    expect(isKubeletLabel(key)).toBe(allowed);
  });

  it('filters a label map', () => {
    expect(
      kubeletLabels({ 'node-role.kubernetes.io/gpu': '', 'karpenter.sh/nodepool': 'np', a: 'b' }),
    ).toEqual({
      'karpenter.sh/nodepool': 'np',
      a: 'b',
    });
  });
});

describe('renderBootstrap', () => {
  const text = renderBootstrap(input());

  it('is a cloud-config that literally contains the kubelet flags', () => {
    expect(text.startsWith('#cloud-config\n')).toBe(true);
    expect(text).toContain(
      '--register-with-taints=karpenter.sh/unregistered:NoExecute,dedicated=gpu:NoSchedule,example.com/not-ready:NoExecute',
    );
    expect(text).toContain(
      '--node-labels=karpenter.sh/capacity-type=spot,karpenter.sh/nodepool=default,node.kubernetes.io/instance-type=Standard_D2s_v5,team=,topology.kubernetes.io/zone=westus2-1',
    );
    expect(text).toContain('--hostname-override=aks-default-x7k2p');
    expect(text).toContain('"systemctl"');
  });

  it('is deterministic', () => {
    expect(renderBootstrap(input())).toBe(text);
  });

  it('round-trips through parseBootstrap', () => {
    const parsed = parseBootstrap(text);
    const original = input();
    expect(parsed).toMatchObject({
      clusterName: original.clusterName,
      apiServerUrl: original.apiServerUrl,
      caCertPem: original.caCertPem,
      bootstrapToken: original.bootstrapToken,
      nodeName: original.nodeName,
      registerWithTaints: original.registerWithTaints,
      nodeLabels: original.nodeLabels,
    });
    expect(parsed.kubeletFlags).toMatchObject({
      'bootstrap-kubeconfig': '/var/lib/kubelet/bootstrap-kubeconfig',
      'cloud-provider': 'external',
    });
  });

  it('round-trips through base64 custom data', () => {
    expect(parseBootstrap(decodeCustomData(encodeCustomData(text)))).toEqual(parseBootstrap(text));
  });

  it('round-trips with no labels and kubelet configuration', () => {
    const parsed = parseBootstrap(
      renderBootstrap(
        input({
          nodeLabels: {},
          reservations: {
            'kube-reserved': 'cpu=100m,memory=2048Mi',
            'eviction-hard': 'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%',
            'max-pods': '250',
          },
          kubeletConfig: {
            cpuManagerPolicy: 'static',
            cpuCFSQuota: false,
            imageGCHighThresholdPercent: 85,
            imageGCLowThresholdPercent: 80,
            allowedUnsafeSysctls: ['net.core.somaxconn', 'kernel.msg*'],
            containerLogMaxFiles: 5,
            podPidsLimit: 4096,
          },
        }),
      ),
    );
    expect(parsed.nodeLabels).toEqual({});
    expect(parsed.kubeletFlags).toMatchObject({
      'kube-reserved': 'cpu=100m,memory=2048Mi',
      'eviction-hard': 'memory.available<100Mi,nodefs.available<10%,nodefs.inodesFree<5%',
      'max-pods': '250',
      'cpu-manager-policy': 'static',
      'cpu-cfs-quota': 'false',
      'image-gc-high-threshold': '85',
      'image-gc-low-threshold': '80',
      'allowed-unsafe-sysctls': 'net.core.somaxconn,kernel.msg*',
      'container-log-max-files': '5',
      'pod-max-pids': '4096',
    });
  });

  it('refuses flag values systemd would split', () => {
    expect(() => renderBootstrap(input({ apiServerUrl: 'https://x y' }))).not.toThrow();
    expect(() => renderBootstrap(input({ nodeName: 'bad name' }))).toThrow(/hostname-override/);
  });
});

describe('parseBootstrap errors', () => {
  it.each([
    ['no header', '{"write_files":[]}', /does not start with #cloud-config/],
    ['not JSON', '#cloud-config\nwrite_files:\n  - path: x\n', /not the JSON form/],
    ['no files', '#cloud-config\n{}', /no write_files/],
    [
      'missing kubeconfig',
      '#cloud-config\n{"write_files":[]}',
      /no file \/var\/lib\/kubelet\/bootstrap-kubeconfig/,
    ],
  ])('%s', (_name, text, message) => {
    expect(() => parseBootstrap(text)).toThrow(BootstrapParseError);
    expect(() => parseBootstrap(text)).toThrow(message);
  });
});

describe('parseTaint', () => {
  it.each<[string, Taint]>([
    ['a:NoSchedule', { key: 'a', effect: 'NoSchedule' }],
    ['a=b:NoExecute', { key: 'a', value: 'b', effect: 'NoExecute' }],
    ['example.com/x=y:PreferNoSchedule', { key: 'example.com/x', value: 'y', effect: 'PreferNoSchedule' }],
  ])('%s', (text, taint) => {
    expect(parseTaint(text)).toEqual(taint);
    expect(formatTaint(taint)).toBe(text);
  });

  it.each(['a', 'a:Sometimes', ':NoSchedule'])('rejects %s', (text) => {
    expect(() => parseTaint(text)).toThrow(BootstrapParseError);
  });
});

describe('custom data', () => {
  it('encodes UTF-8 as base64', () => {
    expect(encodeCustomData('héllo')).toBe(Buffer.from('héllo', 'utf8').toString('base64'));
    expect(decodeCustomData(encodeCustomData('héllo'))).toBe('héllo');
  });

  it('refuses data Azure would reject', () => {
    expect(() => encodeCustomData('x'.repeat(MAX_CUSTOM_DATA_BYTES + 1))).toThrow(RangeError);
    expect(() => encodeCustomData('x'.repeat(MAX_CUSTOM_DATA_BYTES))).not.toThrow();
  });
});
