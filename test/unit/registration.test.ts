import { describe, expect, it } from 'vitest';
import {
  findNodesForClaim,
  matchNodeForClaim,
  nodeClaimRegisteredStatus,
  nodeSatisfiesRegistrationInvariant,
  planNodeRegistration,
  registrationConditionFor,
  registrationPatch,
} from '../../shared/decisions/registration.js';
import type { Node, Taint } from '../../shared/models/index.js';
import {
  applyJsonPatch,
  condition,
  node,
  nodeClaim,
  PROVIDER_ID,
  UNREGISTERED,
} from './registration-fixtures.js';

const CUSTOM: Taint = { key: 'example.com/dedicated', value: 'gpu', effect: 'NoSchedule' };
const STARTUP: Taint = { key: 'example.com/cni-not-ready', effect: 'NoExecute' };

describe('matchNodeForClaim', () => {
  const other = node({ name: 'other', providerID: 'azure:///subscriptions/0000/x/virtualMachines/other' });

  it.each([
    {
      name: 'exact provider ID',
      nodes: [other, node({})],
      expected: { outcome: 'found', name: 'aks-default-abcde' },
    },
    {
      name: 'provider ID differing only in case (ARM IDs are case-insensitive)',
      nodes: [node({ providerID: PROVIDER_ID.replace('mc_rg', 'MC_RG') })],
      expected: { outcome: 'found', name: 'aks-default-abcde' },
    },
    { name: 'no node with that provider ID', nodes: [other], expected: { outcome: 'none' } },
    { name: 'no nodes at all', nodes: [], expected: { outcome: 'none' } },
  ])('$name', ({ nodes, expected }) => {
    const match = matchNodeForClaim(nodeClaim({}), nodes);
    expect(match.outcome).toBe(expected.outcome);
    if (match.outcome === 'found') expect(match.node.metadata.name).toBe(expected.name);
  });

  it('reports every node when several share the provider ID', () => {
    const match = matchNodeForClaim(nodeClaim({}), [node({ name: 'b' }), other, node({ name: 'a' })]);
    expect(match).toEqual({ outcome: 'multiple', nodeNames: ['a', 'b'] });
  });

  it('matches nothing for a NodeClaim that has no provider ID yet', () => {
    expect(matchNodeForClaim(nodeClaim({ providerID: null }), [node({})])).toEqual({ outcome: 'none' });
    expect(findNodesForClaim([node({})], '')).toEqual([]);
  });

  it('ignores nodes without a provider ID', () => {
    const bare: Node = { metadata: { name: 'bare' }, spec: {} };
    expect(findNodesForClaim([bare], PROVIDER_ID)).toEqual([]);
  });
});

describe('registrationConditionFor', () => {
  it('NodeNotFound is Unknown, so the sweep keeps looking', () => {
    expect(registrationConditionFor({ outcome: 'none' })).toMatchObject({
      type: 'Registered',
      status: 'Unknown',
      reason: 'NodeNotFound',
    });
  });
  it('MultipleNodesFound is False and names the nodes', () => {
    const update = registrationConditionFor({ outcome: 'multiple', nodeNames: ['a', 'b'] });
    expect(update).toMatchObject({ type: 'Registered', status: 'False', reason: 'MultipleNodesFound' });
    expect(update.message).toContain('a, b');
  });
});

describe('planNodeRegistration', () => {
  const claim = nodeClaim({
    labels: { 'karpenter.sh/nodepool': 'default', 'team/owner': 'payments', shared: 'from-claim' },
    annotations: { 'karpenter.sh/nodepool-hash': '123' },
    taints: [CUSTOM],
    startupTaints: [STARTUP],
  });
  const joined = node({
    labels: { 'kubernetes.io/hostname': 'aks-default-abcde', shared: 'from-node' },
    annotations: { 'node.alpha.kubernetes.io/ttl': '0' },
    taints: [UNREGISTERED, CUSTOM, STARTUP, { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' }],
  });

  it('syncs labels, annotations, finalizer, owner reference and removes the unregistered taint', () => {
    const plan = planNodeRegistration(claim, joined);
    expect(plan.changed).toBe(true);
    expect(plan.unregisteredTaintMissing).toBe(false);
    const { metadata, spec } = plan.node;
    expect(metadata.labels).toEqual({
      'kubernetes.io/hostname': 'aks-default-abcde',
      shared: 'from-claim',
      'karpenter.sh/nodepool': 'default',
      'team/owner': 'payments',
      'karpenter.sh/registered': 'true',
    });
    expect(metadata.annotations).toEqual({
      'node.alpha.kubernetes.io/ttl': '0',
      'karpenter.sh/nodepool-hash': '123',
    });
    expect(metadata.finalizers).toEqual(['karpenter.sh/termination']);
    expect(metadata.ownerReferences).toEqual([
      {
        apiVersion: 'karpenter.sh/v1',
        kind: 'NodeClaim',
        name: 'default-abcde',
        uid: 'uid-nodeclaim-1',
        blockOwnerDeletion: true,
      },
    ]);
    expect(spec.taints).toEqual([
      CUSTOM,
      STARTUP,
      { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' },
    ]);
    expect(spec.providerID).toBe(PROVIDER_ID);
    expect(plan.node.status).toEqual(joined.status);
  });

  it('does not mutate its inputs', () => {
    const claimCopy = structuredClone(claim);
    const nodeCopy = structuredClone(joined);
    planNodeRegistration(claim, joined);
    expect(claim).toEqual(claimCopy);
    expect(joined).toEqual(nodeCopy);
  });

  it('is a no-op on an already registered node', () => {
    const first = planNodeRegistration(claim, joined).node;
    const second = planNodeRegistration(claim, first);
    expect(second.changed).toBe(false);
    expect(second.node).toBe(first);
    expect(second.unregisteredTaintMissing).toBe(false);
    expect(registrationPatch(first, second.node)).toEqual([]);
  });

  it('does not re-add startup taints that were removed after the node was registered', () => {
    const registered = planNodeRegistration(claim, joined).node;
    const startupRemoved: Node = {
      ...registered,
      spec: {
        ...registered.spec,
        taints: (registered.spec.taints ?? []).filter((t) => t.key !== STARTUP.key),
      },
    };
    const plan = planNodeRegistration(claim, startupRemoved);
    expect(plan.changed).toBe(false);
    expect(plan.node.spec.taints).not.toContainEqual(STARTUP);
  });

  it('merges missing NodeClaim taints and startup taints onto the node', () => {
    const plan = planNodeRegistration(claim, node({ taints: [UNREGISTERED] }));
    expect(plan.node.spec.taints).toEqual([CUSTOM, STARTUP]);
  });

  it.each([
    {
      name: 'same key and effect, different value: the node keeps its value',
      existing: { key: CUSTOM.key, value: 'cpu', effect: 'NoSchedule' } as Taint,
      expected: [{ key: CUSTOM.key, value: 'cpu', effect: 'NoSchedule' }],
    },
    {
      name: 'same key, different effect: both are kept',
      existing: { key: CUSTOM.key, value: 'gpu', effect: 'NoExecute' } as Taint,
      expected: [{ key: CUSTOM.key, value: 'gpu', effect: 'NoExecute' }, CUSTOM],
    },
    { name: 'identical taint: not duplicated', existing: CUSTOM, expected: [CUSTOM] },
  ])('taint identity is key + effect: $name', ({ existing, expected }) => {
    const plan = planNodeRegistration(
      nodeClaim({ taints: [CUSTOM] }),
      node({ taints: [UNREGISTERED, existing] }),
    );
    expect(plan.node.spec.taints).toEqual(expected);
  });

  it.each([
    { value: 'true', synced: false },
    { value: 'false', synced: true },
  ])('karpenter.sh/do-not-sync-taints=$value', ({ value, synced }) => {
    const notReady: Taint = { key: 'node.kubernetes.io/not-ready', effect: 'NoSchedule' };
    const plan = planNodeRegistration(
      claim,
      node({ labels: { 'karpenter.sh/do-not-sync-taints': value }, taints: [UNREGISTERED, notReady] }),
    );
    // The unregistered taint goes either way: it is the signal that the sync is over.
    expect(plan.node.spec.taints).toEqual(synced ? [notReady, CUSTOM, STARTUP] : [notReady]);
    expect(plan.node.metadata.labels?.['karpenter.sh/registered']).toBe('true');
    expect(plan.node.metadata.labels?.['team/owner']).toBe('payments');
  });

  it('removes the unregistered taint whatever its effect or value', () => {
    const plan = planNodeRegistration(
      nodeClaim({}),
      node({
        taints: [UNREGISTERED, { key: 'karpenter.sh/unregistered', value: 'x', effect: 'NoSchedule' }],
      }),
    );
    expect(plan.node.spec.taints).toEqual([]);
  });

  it('flags a node that joined without the unregistered taint, and still registers it', () => {
    const plan = planNodeRegistration(claim, node({}));
    expect(plan.unregisteredTaintMissing).toBe(true);
    expect(plan.changed).toBe(true);
    expect(plan.node.metadata.labels?.['karpenter.sh/registered']).toBe('true');
  });

  it('does not flag a node that lost the taint because registration already happened', () => {
    const registered = planNodeRegistration(claim, joined).node;
    expect(planNodeRegistration(claim, registered).unregisteredTaintMissing).toBe(false);
  });

  it('keeps existing finalizers and owner references and does not duplicate its own', () => {
    const owned = node({
      taints: [UNREGISTERED],
      finalizers: ['example.com/keep', 'karpenter.sh/termination'],
    });
    owned.metadata.ownerReferences = [
      { apiVersion: 'v1', kind: 'ConfigMap', name: 'x', uid: 'u-x' },
      { apiVersion: 'karpenter.sh/v1', kind: 'NodeClaim', name: 'default-abcde', uid: 'uid-nodeclaim-1' },
    ];
    const plan = planNodeRegistration(claim, owned);
    expect(plan.node.metadata.finalizers).toEqual(['example.com/keep', 'karpenter.sh/termination']);
    expect(plan.node.metadata.ownerReferences).toEqual(owned.metadata.ownerReferences);
  });

  it('refuses to build an owner reference without the NodeClaim uid', () => {
    const noUid = nodeClaim({});
    delete noUid.metadata.uid;
    expect(() => planNodeRegistration(noUid, joined)).toThrow(/uid/);
  });
});

describe('registrationPatch', () => {
  const claim = nodeClaim({
    labels: { 'karpenter.sh/nodepool': 'default', 'example.com/a~b': 'tilde' },
    annotations: { note: 'x' },
    taints: [CUSTOM],
  });

  it('starts with the resourceVersion guard and escapes label keys', () => {
    const before = node({ labels: { 'kubernetes.io/os': 'linux' }, taints: [UNREGISTERED] });
    const patch = registrationPatch(before, planNodeRegistration(claim, before).node);
    expect(patch[0]).toEqual({ op: 'replace', path: '/metadata/resourceVersion', value: '100' });
    expect(patch).toContainEqual({
      op: 'add',
      path: '/metadata/labels/karpenter.sh~1nodepool',
      value: 'default',
    });
    expect(patch).toContainEqual({ op: 'add', path: '/metadata/labels/example.com~1a~0b', value: 'tilde' });
    expect(patch).toContainEqual({
      op: 'add',
      path: '/metadata/labels/karpenter.sh~1registered',
      value: 'true',
    });
    expect(patch).toContainEqual({ op: 'add', path: '/spec/taints', value: [CUSTOM] });
  });

  it.each([
    {
      name: 'node with labels, annotations and taints',
      before: node({ labels: { a: '1', shared: 'old' }, annotations: { b: '2' }, taints: [UNREGISTERED] }),
    },
    { name: 'node with no labels, annotations or taints', before: node({}) },
    { name: 'node whose only taint is the unregistered one', before: node({ taints: [UNREGISTERED] }) },
  ])('applied to the node it reproduces the planned state: $name', ({ before }) => {
    const after = planNodeRegistration(
      nodeClaim({ labels: { shared: 'new' }, annotations: { c: '3' }, taints: [] }),
      before,
    ).node;
    const patched = applyJsonPatch(before, registrationPatch(before, after));
    expect(patched.metadata.labels).toEqual(after.metadata.labels);
    expect(patched.metadata.annotations).toEqual(after.metadata.annotations);
    expect(patched.metadata.finalizers).toEqual(after.metadata.finalizers);
    expect(patched.metadata.ownerReferences).toEqual(after.metadata.ownerReferences);
    expect(patched.spec.taints ?? []).toEqual(after.spec.taints ?? []);
  });

  it('removes /spec/taints when the unregistered taint was the only one', () => {
    const before = node({ taints: [UNREGISTERED] });
    const patch = registrationPatch(before, planNodeRegistration(nodeClaim({}), before).node);
    expect(patch).toContainEqual({ op: 'remove', path: '/spec/taints' });
  });

  it('replaces a changed label value', () => {
    const before = node({ labels: { shared: 'old' }, taints: [UNREGISTERED] });
    const patch = registrationPatch(
      before,
      planNodeRegistration(nodeClaim({ labels: { shared: 'new' } }), before).node,
    );
    expect(patch).toContainEqual({ op: 'replace', path: '/metadata/labels/shared', value: 'new' });
  });

  it('refuses to build an unguarded patch', () => {
    const before = node({ resourceVersion: null, taints: [UNREGISTERED] });
    expect(() => registrationPatch(before, planNodeRegistration(claim, before).node)).toThrow(
      /resourceVersion/,
    );
  });
});

describe('nodeClaimRegisteredStatus', () => {
  it('sets Registered=True and nodeName, keeping other status', () => {
    const claim = nodeClaim({
      conditions: [condition('Launched', 'True'), condition('Registered', 'Unknown', 'NodeNotFound')],
    });
    const now = new Date('2025-01-01T00:05:00.000Z');
    const status = nodeClaimRegisteredStatus(claim, 'aks-default-abcde', now);
    expect(status.nodeName).toBe('aks-default-abcde');
    expect(status.providerID).toBe(PROVIDER_ID);
    expect(status.conditions).toEqual([
      condition('Launched', 'True'),
      {
        type: 'Registered',
        status: 'True',
        reason: 'Registered',
        message: '',
        lastTransitionTime: now.toISOString(),
      },
    ]);
    expect(claim.status?.conditions?.[1]?.status).toBe('Unknown');
  });
});

describe('nodeSatisfiesRegistrationInvariant', () => {
  const claim = nodeClaim({
    labels: { 'karpenter.sh/nodepool': 'default', team: 'a' },
    taints: [CUSTOM],
    startupTaints: [STARTUP],
  });

  it.each([
    { name: 'still carries the unregistered taint', n: node({ taints: [UNREGISTERED] }), ok: true },
    { name: 'lacks the taint and the labels', n: node({}), ok: false },
    {
      name: 'has labels but lacks a NodeClaim taint',
      n: node({ labels: { 'karpenter.sh/nodepool': 'default', team: 'a' } }),
      ok: false,
    },
    {
      name: 'has a label with the wrong value',
      n: node({ labels: { 'karpenter.sh/nodepool': 'default', team: 'b' }, taints: [CUSTOM] }),
      ok: false,
    },
    {
      name: 'has labels and taints (startup taint already removed)',
      n: node({ labels: { 'karpenter.sh/nodepool': 'default', team: 'a' }, taints: [CUSTOM] }),
      ok: true,
    },
    {
      name: 'has labels, taint sync disabled',
      n: node({
        labels: { 'karpenter.sh/nodepool': 'default', team: 'a', 'karpenter.sh/do-not-sync-taints': 'true' },
      }),
      ok: true,
    },
  ])('$name → $ok', ({ n, ok }) => {
    expect(nodeSatisfiesRegistrationInvariant(n, claim)).toBe(ok);
  });

  it('holds for the node before and after a planned registration', () => {
    const before = node({ taints: [UNREGISTERED] });
    expect(nodeSatisfiesRegistrationInvariant(before, claim)).toBe(true);
    expect(nodeSatisfiesRegistrationInvariant(planNodeRegistration(claim, before).node, claim)).toBe(true);
  });
});
