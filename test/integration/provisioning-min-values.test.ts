// MIN_VALUES_POLICY through a provisioning window on the real control plane: a NodePool asks for 3
// instance types of which the ARM emulator's catalog has 2. Under Strict the pod is unschedulable and no
// NodeClaim is created; under BestEffort the NodeClaim is created with the minValues lowered to 2 and the
// annotation karpenter.sh/nodeclaim-min-values-relaxed: "true", as upstream Karpenter writes it.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { WellKnown, type NodePool } from '../../shared/models/karpenter.js';
import { nodeClass, nodeClassRef } from '../support/fixtures.js';
import { startLaunchStack, type LaunchStack } from '../support/launch-stack.js';
import { pollUntilDefined } from '../support/poll.js';
import { provisionRunWindow } from '../support/provision-window.js';

const run = randomBytes(3).toString('hex');
const namespace = 'default';
const OFFERED = ['Standard_D2s_v5', 'Standard_D4s_v5'];
let stack: LaunchStack;
let core: CoreV1Api;

beforeAll(async () => {
  stack = await startLaunchStack();
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
});

afterAll(async () => {
  await core
    .deleteNamespacedPod({ name: `flexible-${run}`, namespace, gracePeriodSeconds: 0 })
    .catch(() => {});
  for (const claim of await stack.deps.objects.nodeClaims.list({
    labelSelector: `${stack.runLabel.key}=${stack.runLabel.value}`,
  }))
    await stack.deps.objects.nodeClaims.delete(claim.metadata.name);
  await stack.admin.objects.nodePools.delete(`minvalues-${run}`);
  await stack.admin.objects.nodeClasses.delete(`minvalues-${run}`);
  await stack?.stop();
});

test(
  'Strict leaves the pod unschedulable; BestEffort creates the NodeClaim with minValues relaxed and annotated',
  { timeout: 120_000 },
  async () => {
    const labels = { [stack.runLabel.key]: stack.runLabel.value };
    await stack.admin.objects.nodeClasses.create(nodeClass(`minvalues-${run}`, 'Ubuntu2204'));
    const nodePool: NodePool = {
      apiVersion: 'karpenter.sh/v1',
      kind: 'NodePool',
      metadata: { name: `minvalues-${run}` },
      spec: {
        template: {
          metadata: { labels },
          spec: {
            nodeClassRef: nodeClassRef(`minvalues-${run}`),
            requirements: [
              {
                key: WellKnown.instanceTypeLabel,
                operator: 'In',
                values: [...OFFERED, 'Standard_Nope_v9'],
                minValues: 3,
              },
            ],
          },
        },
      },
    };
    await stack.admin.objects.nodePools.create(nodePool);
    const body: V1Pod = {
      metadata: { name: `flexible-${run}`, namespace, labels },
      spec: {
        // Its own NodePool's label, which no Node of the shared cluster has: the scheduler finds it
        // Unschedulable whatever other test files have made meanwhile.
        nodeSelector: labels,
        containers: [
          { name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: { cpu: '500m' } } },
        ],
      },
    };
    await core.createNamespacedPod({ namespace, body });
    await pollUntilDefined('the scheduler to mark the pod Unschedulable', async () => {
      const pod = await core.readNamespacedPod({ name: `flexible-${run}`, namespace });
      return pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')
        ? true
        : undefined;
    });

    const strict = await provisionRunWindow(stack, `strict-${run}`, {
      preferencePolicy: 'Respect',
      minValuesPolicy: 'Strict',
    });
    expect(strict).toMatchObject({ pods: 1, unschedulable: 1 });
    expect(strict.created).toEqual([]);

    const bestEffort = await provisionRunWindow(stack, `best-effort-${run}`, {
      preferencePolicy: 'Respect',
      minValuesPolicy: 'BestEffort',
    });
    expect(bestEffort).toMatchObject({ pods: 1, unschedulable: 0 });
    expect(bestEffort.created).toHaveLength(1);
    const claim = await stack.deps.objects.nodeClaims.get(bestEffort.created[0]!);
    expect(claim?.metadata.annotations?.[WellKnown.minValuesRelaxedAnnotation]).toBe('true');
    const instanceTypes = claim?.spec.requirements.find((r) => r.key === WellKnown.instanceTypeLabel);
    expect(instanceTypes?.minValues).toBe(2);
    expect([...(instanceTypes?.values ?? [])].sort()).toEqual(OFFERED);
  },
);
