import { describe, expect, it } from 'vitest';
import type { Taint } from '../../shared/models/kube.js';
import {
  BootstrapParseError,
  MAX_CUSTOM_DATA_BYTES,
  decodeCustomData,
  encodeCustomData,
  isKubeletLabel,
  kubeletLabels,
  parseTaint,
  formatTaint,
  registrationTaints,
} from '../../shared/cloudprovider/azure/decisions/bootstrap.js';

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

describe('custom data encoding', () => {
  it('round-trips through base64', () => {
    const text = 'MIME-Version: 1.0\r\nü\n';
    expect(decodeCustomData(encodeCustomData(text))).toBe(text);
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
