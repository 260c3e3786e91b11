// Buffer room in consolidation and the sweep's refill signal, against in-memory fakes: a node that holds a
// buffer's virtual pods is not an empty candidate, Underutilized consolidation may delete it only when the
// virtual pods fit on another node, and the capacity-buffers step signals provisioning exactly when the
// buffer needs a window (new status, capacity not yet there, or its room taken by real pods). The buffers,
// their PodTemplate and the status patches are the in-memory store's (test/support/fake-capacity-buffers.ts);
// test/integration/capacity-buffers.test.ts and test/e2e/headroom.test.ts use the real API server.
import { describe, expect, test } from 'vitest';
import { evaluateCandidates, type Candidate } from '../../../shared/decisions/consolidation/candidates.js';
import type { ConsolidationPod } from '../../../shared/decisions/consolidation/pods.js';
import { underutilizedSearch } from '../../../shared/decisions/consolidation/underutilized.js';
import { withCapacityBufferPods } from '../../../shared/lifecycle/capacity-buffers/capacity-buffer-room.js';
import { capacityBuffersStep } from '../../../shared/lifecycle/sweep/steps/capacity-buffers.js';
import type { CapacityBuffer } from '../../../shared/models/capacity-buffer.js';
import type { NodeClaim } from '../../../shared/models/karpenter.js';
import type { Node } from '../../../shared/models/kube.js';
import { ProvisioningNames } from '../../../shared/runtime/function-names.js';
import { consolidatingPool, runningPod } from '../../support/consolidation-fixtures.js';
import { nodeClassRef } from '../../support/fixtures.js';
import { fakeLifecycle, fakeSweepContext, FakeOrchestrations } from '../../support/fake-lifecycle.js';

const POOL = 'general';
const chunk = { containers: [{ name: 'app', resources: { requests: { cpu: '1', memory: '2Gi' } } }] };

function node(name: string, cpu = '3860m'): Node {
  return {
    metadata: {
      name,
      labels: {
        'karpenter.sh/nodepool': POOL,
        'kubernetes.io/hostname': name,
        'karpenter.sh/initialized': 'true',
      },
    },
    spec: { providerID: `azure:///vm/${name}` },
    status: {
      allocatable: { cpu, memory: '12Gi', pods: '110' },
      conditions: [{ type: 'Ready', status: 'True', reason: 'KubeletReady', message: '' }],
    },
  };
}

function claimOf(n: Node): NodeClaim {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: `claim-${n.metadata.name}`,
      uid: `uid-${n.metadata.name}`,
      labels: { 'karpenter.sh/nodepool': POOL },
    },
    spec: { nodeClassRef: nodeClassRef('default'), requirements: [] },
    status: {
      providerID: n.spec.providerID!,
      nodeName: n.metadata.name,
      conditions: [
        {
          type: 'Initialized',
          status: 'True',
          reason: 'Initialized',
          message: '',
          lastTransitionTime: '2026-12-01T00:00:00Z',
        },
        {
          type: 'Consolidatable',
          status: 'True',
          reason: 'Consolidatable',
          message: '',
          lastTransitionTime: '2026-12-01T00:00:00Z',
        },
      ],
    },
  };
}

const pool = consolidatingPool(POOL);

const realPod = (name: string, nodeName: string, cpu: string) =>
  runningPod(name, nodeName, { cpu, memory: '1Gi' });

function readyBuffer(conditions: { type: string; status: 'True' | 'False' }[] = []): CapacityBuffer {
  return {
    metadata: {
      name: 'headroom',
      namespace: 'default',
      uid: 'uid-buffer',
      generation: 1,
      resourceVersion: '7',
    },
    spec: { podTemplateRef: { name: 'chunk' }, replicas: 2 },
    status: {
      replicas: 2,
      podTemplateRef: { name: 'chunk' },
      conditions: [
        {
          type: 'ReadyForProvisioning',
          status: 'True',
          reason: 'Resolved',
          message: 'Pod template resolved successfully',
          lastTransitionTime: '2026-12-01T00:00:00Z',
          observedGeneration: 1,
        },
        ...conditions.map((c) => ({
          ...c,
          reason: c.status === 'True' ? 'FitsExistingCapacity' : 'RequiresNewCapacity',
          message: '',
          lastTransitionTime: '2026-12-01T00:00:00Z',
          observedGeneration: 1,
        })),
      ],
    },
  };
}

/** The buffer and its PodTemplate in the in-memory store, with the gate on, over `nodes` and `pods`. */
function setup(buffer: CapacityBuffer, nodes: Node[], pods: ConsolidationPod[]) {
  const fake = fakeLifecycle();
  fake.capacityBuffers.seed(buffer);
  fake.capacityBuffers.podTemplates.set('default/chunk', { template: { spec: chunk } });
  const deps = {
    ...fake.deps,
    settings: {
      ...fake.deps.settings,
      featureGates: { ...fake.deps.settings.featureGates, CapacityBuffer: true },
    },
    cluster: {
      ...fake.deps.cluster,
      read: async () => ({ nodes, nodeClaims: nodes.map(claimOf), nodePools: [pool], nodeClasses: [] }),
      workloads: async () => ({ pods, pdbs: [], podEventTimes: new Map() }),
    },
  };
  fake.deps = deps;
  return { fake, deps, patches: fake.capacityBuffers.statusPatches };
}

function byNodeOf(pods: ConsolidationPod[]): Map<string, ConsolidationPod[]> {
  const byNode = new Map<string, ConsolidationPod[]>();
  for (const pod of pods) byNode.set(pod.nodeName!, [...(byNode.get(pod.nodeName!) ?? []), pod]);
  return byNode;
}

describe('buffer room in consolidation', () => {
  test('the node holding the virtual pods is not empty; the one without them is', async () => {
    const warm = node('warm');
    const busy = node('busy');
    const pods = [realPod('real', 'busy', '3500m')];
    const { deps } = setup(readyBuffer(), [busy, warm], pods);
    const withBuffer = await withCapacityBufferPods(deps, { byNode: byNodeOf(pods) });
    expect(withBuffer.byNode.get('warm')?.map((p) => [p.name, p.labels])).toEqual([
      ['capacity-buffer-headroom-1', {}],
      ['capacity-buffer-headroom-2', {}],
    ]);
    const verdicts = evaluateCandidates(
      [warm, busy].map((n) => ({
        nodeClaim: claimOf(n),
        node: n,
        pods: withBuffer.byNode.get(n.metadata.name) ?? [],
        disrupting: false,
      })),
      { nodePool: pool, pdbs: new Map(), nominatedNodes: new Set(), now: new Date('2026-12-02T00:00:00Z') },
    );
    expect(verdicts.map((v) => [v.name, v.kind === 'candidate' && v.empty])).toEqual([
      ['claim-warm', false],
      ['claim-busy', false],
    ]);
    // Without the buffer the warm node would be an empty candidate.
    const bare = evaluateCandidates([{ nodeClaim: claimOf(warm), node: warm, pods: [], disrupting: false }], {
      nodePool: pool,
      pdbs: new Map(),
      nominatedNodes: new Set(),
      now: new Date('2026-12-02T00:00:00Z'),
    });
    expect(bare[0]?.kind === 'candidate' && bare[0].empty).toBe(true);
  });

  test('the warm node can be deleted only when its virtual pods fit on another node', async () => {
    const decide = async (otherCpu: string) => {
      const warm = node('warm');
      const other = node('other', otherCpu);
      const { deps } = setup(readyBuffer(), [warm, other], []);
      const pods = await withCapacityBufferPods(deps, { byNode: new Map<string, ConsolidationPod[]>() });
      const held = pods.byNode.get('warm') ?? pods.byNode.get('other') ?? [];
      const holder = pods.byNode.has('warm') ? warm : other;
      const spare = holder === warm ? other : warm;
      const candidate: Candidate = {
        kind: 'candidate',
        name: claimOf(holder).metadata.name,
        input: { nodeClaim: claimOf(holder), node: holder, pods: held, disrupting: false },
        reschedulable: held,
        empty: false,
        consolidatableSince: new Date('2026-12-01T00:00:00Z'),
      };
      return underutilizedSearch({
        candidates: [
          {
            name: candidate.name,
            nodeName: holder.metadata.name,
            price: 0.2,
            capacityType: 'on-demand',
            instanceType: 'Standard_D4s_v5',
            pods: held.map((p) => ({
              metadata: { name: p.name, namespace: p.namespace, uid: p.uid },
              spec: p.spec!,
            })),
            disruptionCost: 1,
          },
        ],
        cluster: {
          nodePools: [],
          existingNodes: [
            {
              name: spare.metadata.name,
              kind: 'Node',
              labels: spare.metadata.labels ?? {},
              allocatable: spare.status!.allocatable!,
              // What consolidation's input gives the other nodes: their pods, virtual ones included.
              pods: (pods.byNode.get(spare.metadata.name) ?? []).map((p) => ({
                namespace: p.namespace,
                name: p.name,
                spec: p.spec!,
              })),
              initialized: true,
            },
          ],
        },
        pendingPods: [],
        allowed: 1,
        spotToSpot: false,
      });
    };
    // Another node with room for both chunks: the warm node may go, the buffer stays whole elsewhere.
    expect((await decide('3860m')).command?.decision).toBe('delete');
    // Another node with room for one chunk only: no command, the buffer keeps its node.
    const kept = await decide('1500m');
    expect(kept.command).toBeUndefined();
  });
});

describe('capacityBuffersStep signals provisioning when a buffer needs a window', () => {
  const run = async (buffer: CapacityBuffer, nodes: Node[], pods: ConsolidationPod[]) => {
    const { fake, patches } = setup(buffer, nodes, pods);
    const orchestrations = new FakeOrchestrations();
    const report = await capacityBuffersStep.run(fakeSweepContext(fake, orchestrations, { nodes }));
    return { report, patches, signalled: orchestrations.startCalls > 0 || orchestrations.started.length > 0 };
  };
  const signalledInstances = async (buffer: CapacityBuffer, nodes: Node[], pods: ConsolidationPod[]) => {
    const { fake } = setup(buffer, nodes, pods);
    const orchestrations = new FakeOrchestrations();
    await capacityBuffersStep.run(fakeSweepContext(fake, orchestrations, { nodes }));
    return orchestrations.started.map((s) => s.instanceId);
  };

  test('a new buffer: its status is written and a window is signalled', async () => {
    const fresh: CapacityBuffer = { ...readyBuffer(), status: {} };
    const { report, patches } = await run(fresh, [node('warm')], []);
    expect(report).toMatchObject({ examined: 1, acted: 1, failed: 0 });
    expect(patches).toHaveLength(1);
    expect(await signalledInstances(fresh, [node('warm')], [])).toEqual([ProvisioningNames.instanceId]);
  });

  test('Provisioning=True and its room free on a Ready node: nothing written, nothing signalled', async () => {
    const { report, patches, signalled } = await run(
      readyBuffer([{ type: 'Provisioning', status: 'True' }]),
      [node('warm')],
      [],
    );
    expect(report).toMatchObject({ examined: 1, acted: 0 });
    expect(patches).toEqual([]);
    expect(signalled).toBe(false);
  });

  test('a burst took the room: a window is signalled to refill the buffer', async () => {
    const burst = [realPod('b1', 'warm', '1'), realPod('b2', 'warm', '1'), realPod('b3', 'warm', '1')];
    const { signalled } = await run(
      readyBuffer([{ type: 'Provisioning', status: 'True' }]),
      [node('warm')],
      burst,
    );
    expect(signalled).toBe(true);
  });

  test('capacity not there yet (Provisioning=False): a window is signalled', async () => {
    const { signalled } = await run(readyBuffer([{ type: 'Provisioning', status: 'False' }]), [], []);
    expect(signalled).toBe(true);
  });
});
