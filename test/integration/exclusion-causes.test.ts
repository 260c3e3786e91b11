// Why a pod waits, on the real control plane: the causes that need real objects, each from one real
// provisioning window. A host port a real DaemonSet holds (HostPort), a pod that fits the only size but
// not beside a real DaemonSet's requests (DaemonSetOverhead), anti-affinity against another real pod of
// the window in the only zone (Topology), and a claim bound to a real PersistentVolume pinned to another
// zone (VolumeZone). The window's record names the cause for the NodePool meant for each pod, and the
// FailedScheduling event says it in one line after upstream's prefix.
import { randomBytes } from 'node:crypto';
import {
  AppsV1Api,
  CoreV1Api,
  KubeConfig,
  type V1Container,
  type V1DaemonSet,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import type { ExclusionCause, ProvisioningRecord } from '../../shared/decisions/explain/decision-record.js';
import { EVENT_COMPONENT } from '../../shared/lifecycle/dependencies.js';
import { provisionRunWindow } from '../support/provision-window.js';
import type { NodePool } from '../../shared/models/karpenter.js';
import { nodeClass, nodeClassRef } from '../support/fixtures.js';
import { startLaunchStack, type LaunchStack } from '../support/launch-stack.js';
import { pollUntilDefined } from '../support/poll.js';

const run = randomBytes(3).toString('hex');
const namespace = 'default';
const ZONE = 'topology.kubernetes.io/zone';
const HOST_PORT = 20_000 + Math.floor(Math.random() * 10_000);
let stack: LaunchStack;
let core: CoreV1Api;
let apps: AppsV1Api;

const cases = ['hp', 'ds', 'topo', 'vol'] as const;
type Case = (typeof cases)[number];
const tier = (c: Case) => `${c}-${run}`;

function pool(c: Case, requirements: NodePool['spec']['template']['spec']['requirements']): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: `${c}-${run}` },
    spec: {
      template: {
        metadata: { labels: { [stack.runLabel.key]: stack.runLabel.value, tier: tier(c) } },
        spec: { nodeClassRef: nodeClassRef(`causes-${run}`), requirements },
      },
    },
  };
}

function pod(name: string, c: Case, spec: Partial<NonNullable<V1Pod['spec']>> = {}, cpu = '100m'): V1Pod {
  return {
    metadata: {
      name: `${name}-${run}`,
      namespace,
      labels: { [stack.runLabel.key]: stack.runLabel.value, app: `${c}-${run}` },
    },
    spec: {
      nodeSelector: { tier: tier(c) },
      containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu } } }],
      ...spec,
    },
  };
}

function daemonSet(c: Case, container: Partial<V1Container>): V1DaemonSet {
  return {
    metadata: { name: `${c}-${run}` },
    spec: {
      selector: { matchLabels: { app: `${c}-ds-${run}` } },
      template: {
        metadata: { labels: { app: `${c}-ds-${run}` } },
        spec: {
          nodeSelector: { tier: tier(c) },
          containers: [{ name: 'agent', image: 'registry.k8s.io/pause:3.10', ...container }],
        },
      },
    },
  };
}

const podNames = ['hp', 'ds', 'topo-a', 'topo-b', 'vol'];

beforeAll(async () => {
  stack = await startLaunchStack();
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
  apps = config.makeApiClient(AppsV1Api);
});

afterAll(async () => {
  const quietly = (p: Promise<unknown>) => p.catch(() => {});
  for (const name of podNames)
    await quietly(core.deleteNamespacedPod({ name: `${name}-${run}`, namespace, gracePeriodSeconds: 0 }));
  if (stack) {
    for (const claim of await stack.deps.objects.nodeClaims.list({
      labelSelector: `${stack.runLabel.key}=${stack.runLabel.value}`,
    }))
      await stack.deps.objects.nodeClaims.delete(claim.metadata.name);
    for (const c of cases) await quietly(stack.admin.objects.nodePools.delete(`${c}-${run}`));
    await quietly(stack.admin.objects.nodeClasses.delete(`causes-${run}`));
  }
  for (const c of ['hp', 'ds'] as const)
    await quietly(apps.deleteNamespacedDaemonSet({ name: `${c}-${run}`, namespace }));
  await quietly(core.deleteNamespacedPersistentVolumeClaim({ name: `vol-${run}`, namespace }));
  await quietly(core.deletePersistentVolume({ name: `vol-${run}` }));
  await stack?.stop();
});

test(
  'each pod is excluded by the cause its real objects make, in the record and in its event',
  { timeout: 120_000 },
  async () => {
    await stack.admin.objects.nodeClasses.create(nodeClass(`causes-${run}`, 'Ubuntu2204'));
    const family = { key: 'karpenter.azure.com/sku-family', operator: 'In' as const, values: ['D'] };
    const zone1 = { key: ZONE, operator: 'In' as const, values: ['westus2-1'] };
    await stack.admin.objects.nodePools.create(pool('hp', [family]));
    await stack.admin.objects.nodePools.create(
      pool('ds', [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D2s_v5'] }]),
    );
    await stack.admin.objects.nodePools.create(pool('topo', [family, zone1]));
    await stack.admin.objects.nodePools.create(pool('vol', [family, zone1]));

    await apps.createNamespacedDaemonSet({
      namespace,
      body: daemonSet('hp', { ports: [{ containerPort: HOST_PORT, hostPort: HOST_PORT }] }),
    });
    await apps.createNamespacedDaemonSet({
      namespace,
      body: daemonSet('ds', { resources: { requests: { cpu: '1' } } }),
    });
    await core.createPersistentVolume({
      body: {
        metadata: { name: `vol-${run}` },
        spec: {
          capacity: { storage: '1Gi' },
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          hostPath: { path: `/tmp/vol-${run}` },
          nodeAffinity: {
            required: {
              nodeSelectorTerms: [
                { matchExpressions: [{ key: ZONE, operator: 'In', values: ['westus2-2'] }] },
              ],
            },
          },
        },
      },
    });
    await core.createNamespacedPersistentVolumeClaim({
      namespace,
      body: {
        metadata: { name: `vol-${run}` },
        spec: {
          accessModes: ['ReadWriteOnce'],
          storageClassName: '',
          volumeName: `vol-${run}`,
          resources: { requests: { storage: '1Gi' } },
        },
      },
    });

    const antiAffinity = {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          { labelSelector: { matchLabels: { app: `topo-${run}` } }, topologyKey: ZONE },
        ],
      },
    };
    const pods = [
      pod('hp', 'hp', {
        containers: [
          {
            name: 'app',
            image: 'registry.k8s.io/pause:3.10',
            resources: { requests: { cpu: '100m' } },
            ports: [{ containerPort: HOST_PORT, hostPort: HOST_PORT }],
          },
        ],
      }),
      pod('ds', 'ds', {}, '1500m'),
      pod('topo-a', 'topo', { affinity: antiAffinity }),
      pod('topo-b', 'topo', { affinity: antiAffinity }),
      pod('vol', 'vol', {
        volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `vol-${run}` } }],
      }),
    ];
    for (const body of pods) await core.createNamespacedPod({ namespace, body });
    await pollUntilDefined('the scheduler to mark every pod Unschedulable', async () => {
      const listed = await core.listNamespacedPod({
        namespace,
        labelSelector: `${stack.runLabel.key}=${stack.runLabel.value}`,
      });
      const unschedulable = listed.items.filter((p) =>
        p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'),
      );
      return unschedulable.length === pods.length ? true : undefined;
    });

    // The window reads the claims and volumes as the functions' identity, as it would in Azure.
    const report = await provisionRunWindow(stack, `causes-${run}`);
    expect(report.recorded).toBe(true);
    const record = (await stack.deps.decisionRecords.recent('provisioning', 100)).find(
      (r): r is ProvisioningRecord => r.kind === 'provisioning' && r.id === `causes-${run}`,
    );
    if (!record) throw new Error(`no record of window causes-${run}`);
    expect(report).toMatchObject({ pods: 5, unschedulable: 4 });
    expect(report.created).toHaveLength(1);

    const decisions = new Map(record.pods.map((p) => [p.pod, p]));
    const causeFor = (name: string, c: Case): ExclusionCause | undefined =>
      decisions.get(`${namespace}/${name}-${run}`)?.excluded?.find((e) => e.nodePool === `${c}-${run}`)
        ?.cause;
    expect(causeFor('hp', 'hp')).toBe('HostPort');
    expect(causeFor('ds', 'ds')).toBe('DaemonSetOverhead');
    expect(causeFor('vol', 'vol')).toBe('VolumeZone');
    // One of the two anti-affine pods takes the only zone; the other is turned down by topology.
    const topo = ['topo-a', 'topo-b'].map((n) => decisions.get(`${namespace}/${n}-${run}`));
    expect(topo.filter((d) => d?.placed?.kind === 'NodeClaim')).toHaveLength(1);
    const excludedTopo = topo.find((d) => d?.excluded)?.excluded;
    expect(excludedTopo?.find((e) => e.nodePool === `topo-${run}`)?.cause).toBe('Topology');
    expect(record.launches).toEqual([
      expect.objectContaining({
        nodeClaim: report.created[0],
        nodePool: `topo-${run}`,
        zones: ['westus2-1'],
        pods: [topo.find((d) => d?.placed)?.pod],
      }),
    ]);

    const hostPortEvent = await pollUntilDefined(
      'the FailedScheduling event of the host-port pod',
      async () => {
        const events = await core.listNamespacedEvent({
          namespace,
          fieldSelector: `reason=FailedScheduling,involvedObject.name=hp-${run}`,
        });
        return events.items.find((e) => e.source?.component === EVENT_COMPONENT)?.message;
      },
    );
    expect(hostPortEvent).toMatch(/^Failed to schedule pod, /);
    expect(hostPortEvent).not.toMatch(/\n/);
    expect(hostPortEvent).toContain(
      `nodepool "hp-${run}": host port ${HOST_PORT}/TCP is taken by a DaemonSet`,
    );
  },
);
