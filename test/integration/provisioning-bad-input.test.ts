// Bad input to provisioning, against the real control plane (its kube-scheduler marks the pods
// Unschedulable) and the ARM emulator's SKU catalog: a pod with an unsatisfiable requirement, a pod of
// 1,000 CPUs, and a pod whose only NodePool is at its limits each get a FailedScheduling event naming why,
// no NodeClaim is created for them, nothing throws, and the well-formed pod in the same window gets its
// NodeClaim. (A malformed quantity cannot reach a pod: the API server rejects it at create.)
import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import type { NodePool } from '../../shared/models/karpenter.js';
import { EVENT_COMPONENT } from '../../shared/lifecycle/dependencies.js';
import { nodeClass, nodeClassRef } from '../support/fixtures.js';
import { startLaunchStack, type LaunchStack } from '../support/launch-stack.js';
import { pollUntilDefined } from '../support/poll.js';
import { provisionRunWindow } from '../support/provision-window.js';

const run = randomBytes(3).toString('hex');
const namespace = 'default';
let stack: LaunchStack;
let core: CoreV1Api;

function pool(name: string, labels: Record<string, string>, limits?: Record<string, string>): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name },
    spec: {
      ...(limits && { limits }),
      template: {
        metadata: { labels },
        spec: {
          nodeClassRef: nodeClassRef(`bad-${run}`),
          requirements: [{ key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] }],
        },
      },
    },
  };
}

function pod(name: string, spec: Partial<NonNullable<V1Pod['spec']>>, cpu = '500m'): V1Pod {
  return {
    metadata: { name: `${name}-${run}`, namespace, labels: { [stack.runLabel.key]: stack.runLabel.value } },
    spec: {
      containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu } } }],
      ...spec,
    },
  };
}

beforeAll(async () => {
  stack = await startLaunchStack();
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  for (const name of ['ok', 'unsatisfiable', 'huge', 'limited']) {
    await core
      .deleteNamespacedPod({ name: `${name}-${run}`, namespace, gracePeriodSeconds: 0 })
      .catch(() => {});
  }
  for (const claim of await stack.deps.objects.nodeClaims.list({
    labelSelector: `${stack.runLabel.key}=${stack.runLabel.value}`,
  }))
    await stack.deps.objects.nodeClaims.delete(claim.metadata.name);
  await stack.admin.objects.nodePools.delete(`open-${run}`);
  await stack.admin.objects.nodePools.delete(`full-${run}`);
  await stack.admin.objects.nodeClasses.delete(`bad-${run}`);
  await stack?.stop();
});

test(
  'each bad pod gets a FailedScheduling event and no NodeClaim; the good pod is provisioned',
  { timeout: 120_000 },
  async () => {
    const labels = { [stack.runLabel.key]: stack.runLabel.value };
    await stack.admin.objects.nodeClasses.create(nodeClass(`bad-${run}`, 'Ubuntu2204'));
    await stack.admin.objects.nodePools.create(pool(`open-${run}`, labels));
    await stack.admin.objects.nodePools.create(
      pool(`full-${run}`, { ...labels, tier: `full-${run}` }, { cpu: '0' }),
    );
    const pods = [
      // Selects its own NodePool's label, which no Node of the shared cluster has yet: the scheduler
      // must find it Unschedulable, however many Nodes other test files have made meanwhile.
      pod('ok', { nodeSelector: labels }),
      pod('unsatisfiable', { nodeSelector: { 'karpenter.azure.com/sku-family': 'Z' } }),
      pod('huge', { nodeSelector: labels }, '1000'),
      pod('limited', { nodeSelector: { tier: `full-${run}` } }),
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

    /** One provisioning window over this file's pods, always the same window name. */
    const provisionWindow = () => provisionRunWindow(stack, `bad-${run}`);
    const report = await provisionWindow();
    expect(report).toMatchObject({ pods: 4, unschedulable: 3 });
    expect(report.created).toHaveLength(1);
    const claim = await stack.deps.objects.nodeClaims.get(report.created[0]!);
    expect(claim?.metadata.labels?.['karpenter.sh/nodepool']).toBe(`open-${run}`);

    const reasons = await pollUntilDefined('a FailedScheduling event on each bad pod', async () => {
      const events = await core.listNamespacedEvent({ namespace, fieldSelector: 'reason=FailedScheduling' });
      const byPod = new Map<string, string>();
      for (const event of events.items) {
        // Provisioning's own events only: kube-scheduler's (written through events.k8s.io, so not always
        // with source.component set in the core/v1 view) say FailedScheduling too.
        if (event.source?.component !== EVENT_COMPONENT) continue;
        byPod.set(event.involvedObject.name ?? '', event.message ?? '');
      }
      const names = ['unsatisfiable', 'huge', 'limited'].map((n) => `${n}-${run}`);
      return names.every((n) => byPod.has(n)) ? names.map((n) => [n, byPod.get(n)!] as const) : undefined;
    });
    for (const [name, message] of reasons) {
      expect(message, name).toMatch(/^Failed to schedule pod, /);
    }
    const byName = new Map(reasons);
    expect(byName.get(`unsatisfiable-${run}`)).toMatch(/sku-family/);
    expect(byName.get(`huge-${run}`)).toMatch(/cpu/);
    expect(byName.get(`limited-${run}`)).toMatch(/limit/);

    // A second run of the same window creates nothing new: the names are the same, AlreadyExists is success.
    const again = await provisionWindow();
    expect(again.created).toEqual([]);
  },
);
