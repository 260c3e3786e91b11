import { describe, expect, it } from 'vitest';
import {
  evaluateInitialization,
  initializedLabelPatch,
  nodeLabelsAfterInitialization,
  quantityIsZero,
} from '../../shared/decisions/initialization.js';
import type { Taint } from '../../shared/models/index.js';
import { applyJsonPatch, condition, node, nodeClaim, UNREGISTERED } from './registration-fixtures.js';

const registered = [condition('Launched', 'True'), condition('Registered', 'True')];
const STARTUP: Taint = { key: 'example.com/cni-not-ready', value: 'true', effect: 'NoSchedule' };

describe('evaluateInitialization', () => {
  it.each([
    {
      name: 'not registered',
      claim: nodeClaim({
        conditions: [condition('Launched', 'True'), condition('Registered', 'Unknown', 'NodeNotFound')],
      }),
      n: node({}),
      reason: 'NotRegistered',
      message: /not registered/,
    },
    {
      name: 'node not found',
      claim: nodeClaim({ conditions: registered }),
      n: undefined,
      reason: 'NodeNotFound',
      message: /not found/,
    },
    {
      name: 'node NotReady',
      claim: nodeClaim({ conditions: registered }),
      n: node({ ready: 'False' }),
      reason: 'NodeNotReady',
      message: /NotReady/,
    },
    {
      name: 'node Ready Unknown',
      claim: nodeClaim({ conditions: registered }),
      n: node({ ready: 'Unknown' }),
      reason: 'NodeNotReady',
      message: /NotReady/,
    },
    {
      name: 'node without a Ready condition',
      claim: nodeClaim({ conditions: registered }),
      n: node({ ready: null }),
      reason: 'NodeNotReady',
      message: /NotReady/,
    },
    {
      name: 'startup taint still there',
      claim: nodeClaim({ conditions: registered, startupTaints: [STARTUP] }),
      n: node({ taints: [STARTUP] }),
      reason: 'StartupTaintsExist',
      message: /example\.com\/cni-not-ready=true:NoSchedule/,
    },
    {
      name: 'startup taint key present with another effect is not the startup taint',
      claim: nodeClaim({ conditions: registered, startupTaints: [STARTUP] }),
      n: node({ taints: [{ key: STARTUP.key, effect: 'NoExecute' }] }),
      reason: 'Initialized',
      message: /^$/,
    },
    ...[
      'node.kubernetes.io/not-ready',
      'node.kubernetes.io/unreachable',
      'node.cloudprovider.kubernetes.io/uninitialized',
      'karpenter.sh/unregistered',
    ].flatMap((key) =>
      (['NoSchedule', 'NoExecute'] as const).map((effect) => ({
        name: `ephemeral taint ${key}:${effect}`,
        claim: nodeClaim({ conditions: registered }),
        n: node({ taints: [{ key, effect }] }),
        reason: 'KnownEphemeralTaintsExist',
        message: new RegExp(`${key.replaceAll('.', '\\.')}:${effect}`),
      })),
    ),
    {
      name: 'requested GPU not yet allocatable',
      claim: nodeClaim({ conditions: registered, requests: { cpu: '1', 'nvidia.com/gpu': '1' } }),
      n: node({}),
      reason: 'ResourceNotRegistered',
      message: /"nvidia\.com\/gpu" was requested but not registered/,
    },
    {
      name: 'requested GPU advertised with zero allocatable',
      claim: nodeClaim({ conditions: registered, requests: { 'nvidia.com/gpu': '1' } }),
      n: node({ allocatable: { cpu: '4', 'nvidia.com/gpu': '0' } }),
      reason: 'ResourceNotRegistered',
      message: /nvidia\.com\/gpu/,
    },
    {
      name: 'requested GPU allocatable',
      claim: nodeClaim({ conditions: registered, requests: { cpu: '1', 'nvidia.com/gpu': '1' } }),
      n: node({ allocatable: { cpu: '4', 'nvidia.com/gpu': '2' } }),
      reason: 'Initialized',
      message: /^$/,
    },
    {
      name: 'zero request of an extended resource is not waited for',
      claim: nodeClaim({ conditions: registered, requests: { 'nvidia.com/gpu': '0' } }),
      n: node({}),
      reason: 'Initialized',
      message: /^$/,
    },
    {
      name: 'built-in resources are not waited for even when allocatable omits them',
      claim: nodeClaim({
        conditions: registered,
        requests: { cpu: '1', memory: '1Gi', pods: '1', 'ephemeral-storage': '1Gi' },
      }),
      n: node({ allocatable: {} }),
      reason: 'Initialized',
      message: /^$/,
    },
    {
      name: 'ready, no blocking taints, other taints allowed',
      claim: nodeClaim({ conditions: registered, taints: [{ key: 'dedicated', effect: 'NoSchedule' }] }),
      n: node({ taints: [{ key: 'dedicated', effect: 'NoSchedule' }] }),
      reason: 'Initialized',
      message: /^$/,
    },
  ])('$name → $reason', ({ claim, n, reason, message }) => {
    const verdict = evaluateInitialization(claim, n);
    expect(verdict.type).toBe('Initialized');
    expect(verdict.reason).toBe(reason);
    expect(verdict.status).toBe(reason === 'Initialized' ? 'True' : 'Unknown');
    expect(verdict.message).toMatch(message);
  });

  it('checks in lifecycle order: NotReady is reported before a remaining startup taint', () => {
    const claim = nodeClaim({ conditions: registered, startupTaints: [STARTUP] });
    expect(
      evaluateInitialization(claim, node({ ready: 'False', taints: [STARTUP, UNREGISTERED] })).reason,
    ).toBe('NodeNotReady');
    expect(evaluateInitialization(claim, node({ taints: [STARTUP, UNREGISTERED] })).reason).toBe(
      'StartupTaintsExist',
    );
  });

  it('stays True once initialized, even if the node later goes NotReady', () => {
    const claim = nodeClaim({ conditions: [...registered, condition('Initialized', 'True')] });
    expect(evaluateInitialization(claim, node({ ready: 'False' }))).toMatchObject({
      status: 'True',
      reason: 'Initialized',
    });
  });
});

describe('quantityIsZero', () => {
  it.each([
    [undefined, true],
    ['0', true],
    ['0m', true],
    ['0Gi', true],
    ['0.0', true],
    ['1', false],
    ['100m', false],
    ['0.5', false],
    ['1e3', false],
    ['garbage', false],
  ])('%s → %s', (quantity, zero) => {
    expect(quantityIsZero(quantity)).toBe(zero);
  });
});

describe('initialized label', () => {
  it('adds karpenter.sh/initialized=true once, through a guarded patch', () => {
    const n = node({ labels: { 'karpenter.sh/registered': 'true' } });
    expect(nodeLabelsAfterInitialization(n)).toEqual({
      'karpenter.sh/registered': 'true',
      'karpenter.sh/initialized': 'true',
    });
    const patch = initializedLabelPatch(n);
    expect(patch).toEqual([
      { op: 'replace', path: '/metadata/resourceVersion', value: '100' },
      { op: 'add', path: '/metadata/labels/karpenter.sh~1initialized', value: 'true' },
    ]);
    const patched = applyJsonPatch(n, patch);
    expect(initializedLabelPatch(patched)).toEqual([]);
    expect(nodeLabelsAfterInitialization(patched)).toBe(patched.metadata.labels);
  });

  it('creates the labels map when the node has none', () => {
    const n = node({});
    const patched = applyJsonPatch(n, initializedLabelPatch(n));
    expect(patched.metadata.labels).toEqual({ 'karpenter.sh/initialized': 'true' });
  });
});
