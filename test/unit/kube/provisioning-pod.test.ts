// A provisioning window may read its pods from the pod cache (their slim consolidation form) instead of a
// list: what the window reads of a pod must come out of the cache as it went in. Each case compares what
// the window derives from the API pod with what it derives from the cached one.
import type { V1Pod } from '@kubernetes/client-node';
import { describe, expect, it } from 'vitest';
import { provisioningPodOf, toConsolidationPod } from '../../../shared/kube/pods.js';
import { provisionabilityOf } from '../../../shared/lifecycle/provisioning/cluster-state.js';
import { schedulingPod } from '../../../shared/lifecycle/provisioning/solve-input.js';

const created = new Date('2026-12-01T10:00:00Z');

function pod(
  overrides: Partial<V1Pod['metadata']>,
  spec: Partial<V1Pod['spec']>,
  status: V1Pod['status'],
): V1Pod {
  return {
    metadata: {
      name: 'web-1',
      namespace: 'shop',
      uid: 'uid-web-1',
      labels: { app: 'web' },
      annotations: { 'karpenter.sh/do-not-disrupt': 'true' },
      creationTimestamp: created,
      managedFields: [{ manager: 'kube-controller-manager', operation: 'Update' }],
      ...overrides,
    },
    spec: {
      containers: [{ name: 'app', image: 'web', resources: { requests: { cpu: '175m', memory: '256Mi' } } }],
      tolerations: [{ key: 'dedicated', operator: 'Equal', value: 'web', effect: 'NoSchedule' }],
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: { app: 'web' } },
        },
      ],
      ...spec,
    },
    status,
  };
}

const throughCache = (original: V1Pod): V1Pod => provisioningPodOf(toConsolidationPod(original));

describe('a pod read from the pod cache, as a provisioning window reads it', () => {
  it('a pending pod the scheduler found no room for: as provisionable, and simulated the same', () => {
    const pending = pod(
      {
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'rs-1', controller: true },
          { apiVersion: 'v1', kind: 'ConfigMap', name: 'not-the-controller', uid: 'cm-1' },
        ],
      },
      {},
      {
        phase: 'Pending',
        conditions: [
          {
            type: 'PodScheduled',
            status: 'False',
            reason: 'Unschedulable',
            message: '0/3 nodes are available',
          },
        ],
      },
    );
    const cached = throughCache(pending);

    expect(provisionabilityOf(cached)).toEqual(provisionabilityOf(pending));
    expect(provisionabilityOf(cached).scheduled).toEqual({ status: 'False', reason: 'Unschedulable' });
    expect(schedulingPod(cached)).toEqual(schedulingPod(pending));
    expect(cached.metadata?.ownerReferences).toEqual([
      { apiVersion: 'apps/v1', kind: 'ReplicaSet', name: 'web-abc', uid: 'rs-1', controller: true },
    ]);
    expect(cached.metadata?.managedFields).toBeUndefined();
  });

  it('a pod the scheduler nominated, and one it has not seen yet: neither is provisionable, as listed', () => {
    const nominated = pod(
      {},
      {},
      {
        nominatedNodeName: 'node-a',
        conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }],
      },
    );
    const unseen = pod({ name: 'web-2', uid: 'uid-web-2' }, {}, {});

    expect(provisionabilityOf(throughCache(nominated))).toEqual(provisionabilityOf(nominated));
    expect(provisionabilityOf(throughCache(unseen))).toEqual(provisionabilityOf(unseen));
    expect(provisionabilityOf(throughCache(unseen)).scheduled).toBeUndefined();
  });

  it('a bound DaemonSet pod keeps its node, phase and controlling DaemonSet', () => {
    const daemon = pod(
      {
        name: 'agent-x',
        ownerReferences: [
          { apiVersion: 'apps/v1', kind: 'DaemonSet', name: 'agent', uid: 'ds-1', controller: true },
        ],
      },
      { nodeName: 'node-a' },
      { phase: 'Running', conditions: [{ type: 'PodScheduled', status: 'True' }] },
    );
    const cached = throughCache(daemon);

    expect(cached.spec?.nodeName).toBe('node-a');
    expect(cached.status?.phase).toBe('Running');
    expect(cached.metadata?.ownerReferences?.[0]).toMatchObject({ kind: 'DaemonSet', name: 'agent' });
    expect(provisionabilityOf(cached)).toEqual(provisionabilityOf(daemon));
    expect(schedulingPod(cached)).toEqual(schedulingPod(daemon));
  });

  it('a watch event’s pod (plain JSON: timestamps as strings) comes out as the listed one does', () => {
    const listed = pod(
      {},
      {},
      { conditions: [{ type: 'PodScheduled', status: 'False', reason: 'Unschedulable' }] },
    );
    const asJson = JSON.parse(JSON.stringify(listed)) as V1Pod;

    expect(throughCache(asJson)).toEqual(throughCache(listed));
    expect(throughCache(asJson).metadata?.creationTimestamp).toEqual(created);
  });
});
