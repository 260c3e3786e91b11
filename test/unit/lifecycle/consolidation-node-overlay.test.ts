// Consolidation with the NodeOverlay gate on: an overlay's price changes which replacement consolidation
// picks, because the consolidation input prices the NodePool's instance types (and the candidate) as
// provisioning and launch do. A Standard_D4s_v5 node running one (1 CPU, 2 GiB) pod is replaced by a
// cheaper 2-vCPU size: Standard_D2as_v5 at list prices ($0.086/h against D2s_v5's $0.096/h), and
// Standard_D2s_v5 once an overlay takes 30% off it ($0.0672/h). The SKU catalog is the ARM emulator's and
// the prices the shipped table, through the real adapters' contracts; the Kubernetes custom-objects API
// that lists the overlays is faked (a unit test has no API server; test/integration/node-overlays.test.ts
// reads overlays through the real one).
import type { CustomObjectsApi } from '@kubernetes/client-node';
import { describe, expect, test } from 'vitest';
import { skuCatalog } from '../../../local/arm-emulator/sku-catalog.js';
import type { Candidate } from '../../../shared/decisions/consolidation/candidates.js';
import {
  orderCandidates,
  underutilizedSearch,
} from '../../../shared/decisions/consolidation/underutilized.js';
import type { SkuRecord } from '../../../shared/decisions/offerings.js';
import type { KubeClients } from '../../../shared/kube/client.js';
import { underutilizedInput } from '../../../shared/lifecycle/disruption/underutilized-input.js';
import type { NodeClaim } from '../../../shared/models/karpenter.js';
import type { Node } from '../../../shared/models/kube.js';
import type { NodeOverlay } from '../../../shared/models/node-overlay.js';
import { consolidatingPool, runningPod } from '../../support/consolidation-fixtures.js';
import { nodeClass, nodeClassRef } from '../../support/fixtures.js';
import { fakeLifecycle } from '../../support/fake-lifecycle.js';

const POOL = 'general';
const sizes = ['Standard_D2as_v5', 'Standard_D2s_v5', 'Standard_D4s_v5'];

const pool = consolidatingPool(POOL, [
  { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
  { key: 'node.kubernetes.io/instance-type', operator: 'In', values: sizes },
]);

const node: Node = {
  metadata: {
    name: 'aks-general-a',
    labels: {
      'karpenter.sh/nodepool': POOL,
      'node.kubernetes.io/instance-type': 'Standard_D4s_v5',
      'karpenter.sh/capacity-type': 'on-demand',
      'topology.kubernetes.io/zone': 'westus2-1',
      'kubernetes.io/hostname': 'aks-general-a',
    },
  },
  spec: {
    providerID: 'azure:///subscriptions/s/resourcegroups/rg/providers/Microsoft.Compute/virtualMachines/a',
  },
  status: {
    allocatable: { cpu: '3860m', memory: '12Gi', pods: '110' },
    conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '' }],
  },
};

const nodeClaim: NodeClaim = {
  apiVersion: 'karpenter.sh/v1',
  kind: 'NodeClaim',
  metadata: { name: 'general-a', uid: 'uid-a', labels: { 'karpenter.sh/nodepool': POOL } },
  spec: { nodeClassRef: nodeClassRef('default'), requirements: pool.spec.template.spec.requirements },
  status: { providerID: node.spec.providerID!, nodeName: node.metadata.name },
};

const pod = runningPod('web-1', 'aks-general-a', { cpu: '1', memory: '2Gi' }, { app: 'web' });

const candidate: Candidate = {
  kind: 'candidate',
  name: nodeClaim.metadata.name,
  input: { nodeClaim, node, pods: [pod], disrupting: false },
  reschedulable: [pod],
  empty: false,
  consolidatableSince: new Date('2026-12-01T00:00:00Z'),
};

function discount(percent: number): NodeOverlay {
  return {
    apiVersion: 'karpenter.sh/v1alpha1',
    kind: 'NodeOverlay',
    metadata: { name: 'd2s-discount', generation: 1 },
    spec: {
      requirements: [
        { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D2s_v5'] },
      ],
      priceAdjustment: `-${percent}%`,
    },
  };
}

async function replacementWith(overlays: NodeOverlay[]) {
  const fake = fakeLifecycle();
  fake.nodePools.seed(pool);
  fake.nodeClasses.seed(nodeClass('default', 'Ubuntu2204'));
  // The emulator's catalog is what the SKU adapter reads from it, in ARM's Resource SKU shape.
  fake.skus.push(...(skuCatalog as unknown as SkuRecord[]));
  // Only the one call currentNodeOverlays makes is provided; the cast stands in for the generated client.
  const custom = { listClusterCustomObject: async () => ({ items: overlays, metadata: {} }) };
  const kube = async () => ({ custom: custom as unknown as CustomObjectsApi }) as KubeClients;
  const settings = {
    ...fake.deps.settings,
    featureGates: { ...fake.deps.settings.featureGates, NodeOverlay: true },
  };
  fake.cloud.parts = { ...fake.cloud.parts, kube, settings };
  const deps = { ...fake.deps, kube, settings };
  const input = await underutilizedInput(deps, [candidate], {
    nodePool: pool,
    nodes: [{ node, nodeClaim }],
    pods: {
      byNode: new Map([[node.metadata.name, [pod]]]),
      pending: [],
      nominatedNodes: new Set(),
      pdbs: new Map(),
      podEventTimes: new Map(),
    },
    allowed: 1,
    spotToSpot: false,
  });
  // Consolidation's simulations take the scheduling policies provisioning takes.
  expect(input.cluster.options).toEqual(settings.scheduling);
  const search = underutilizedSearch({ ...input, candidates: orderCandidates(input.candidates) });
  const command = search.command;
  return {
    decision: command?.decision,
    savings: command?.savings,
    replacement: command?.decision === 'replace' ? command.replacement : undefined,
  };
}

describe('consolidation with the NodeOverlay gate on', () => {
  test('at list prices the D4s_v5 is replaced by the cheapest 2-vCPU size, D2as_v5', async () => {
    const command = await replacementWith([]);
    expect(command.decision).toBe('replace');
    expect(command.replacement?.instanceTypeNames[0]).toBe('Standard_D2as_v5');
    expect(command.savings).toBeCloseTo(0.192 - 0.096, 3);
  });

  test('an overlay taking 30% off D2s_v5 makes consolidation pick D2s_v5 instead', async () => {
    const command = await replacementWith([discount(30)]);
    expect(command.decision).toBe('replace');
    expect(command.replacement?.instanceTypeNames[0]).toBe('Standard_D2s_v5');
    // D2s_v5 at the overlaid price (0.096 × 0.7) is now first; D2as_v5 ($0.086) stays as the dearest option.
    expect(command.replacement?.instanceTypeNames.slice(0, 2)).toEqual([
      'Standard_D2s_v5',
      'Standard_D2as_v5',
    ]);
    expect(command.savings).toBeCloseTo(0.192 - 0.086, 3);
  });

  test('a discount too small to beat D2as_v5 leaves the choice alone', async () => {
    const command = await replacementWith([discount(5)]);
    expect(command.replacement?.instanceTypeNames[0]).toBe('Standard_D2as_v5');
  });
});
