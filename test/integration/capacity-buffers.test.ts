// CapacityBuffers on the real control plane (the CRD as the API server serves it, SIG Autoscaling's YAML),
// read and written as the Function App's shipped identity: status and ReadyForProvisioning per referent
// (a PodTemplate, a Deployment with a percentage, a StatefulSet, a ReplicaSet, a missing workload, an
// unsupported kind), the CRD's own CEL rules, and a provisioning window that launches a NodeClaim for the virtual pods alone, writes
// Provisioning=False, and, in the next window, places them on that NodeClaim in flight
// (Provisioning=True, nothing new created). Every buffer selects this file's NodePool only, and its
// template carries the stack's run label, so the windows of other files never see its virtual pods.
import { randomBytes } from 'node:crypto';
import { ApiException, AppsV1Api, CoreV1Api, CustomObjectsApi, KubeConfig } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import {
  bufferVirtualPods,
  readCapacityBuffers,
  writeCapacityBufferStatus,
} from '../../shared/lifecycle/capacity-buffers/capacity-buffers.js';
import { CapacityBufferResource, apiVersionOf } from '../../shared/kube/crd-names.js';
import type { CapacityBuffer, CapacityBufferSpec } from '../../shared/models/capacity-buffer.js';
import type { NodePool } from '../../shared/models/karpenter.js';
import { nodeClass, nodeClassRef } from '../support/fixtures.js';
import { startLaunchStack, type LaunchStack } from '../support/launch-stack.js';
import { provisionRunWindow } from '../support/provision-window.js';

const run = randomBytes(3).toString('hex');
const namespace = `buffers-${run}`;
const poolName = `buffers-${run}`;
let stack: LaunchStack;
let core: CoreV1Api;
let apps: AppsV1Api;
let custom: CustomObjectsApi;

const coordinates = {
  group: CapacityBufferResource.group,
  version: CapacityBufferResource.version,
  plural: CapacityBufferResource.plural,
  namespace,
};

function chunkTemplate(labels: Record<string, string>) {
  return {
    metadata: { labels },
    spec: {
      nodeSelector: { 'karpenter.sh/nodepool': poolName },
      containers: [
        {
          name: 'app',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests: { cpu: '1', memory: '2Gi' } },
        },
      ],
    },
  };
}

async function createBuffer(name: string, spec: CapacityBufferSpec): Promise<void> {
  const body: CapacityBuffer = {
    apiVersion: apiVersionOf(CapacityBufferResource),
    kind: CapacityBufferResource.kind,
    metadata: { name, namespace },
    spec,
  };
  await custom.createNamespacedCustomObject({ ...coordinates, body });
}

async function readBuffer(name: string): Promise<CapacityBuffer> {
  return (await custom.getNamespacedCustomObject({ ...coordinates, name })) as CapacityBuffer;
}

/** What the sweep's capacity-buffers step writes, for this file's namespace. */
async function reconcileStatuses(): Promise<number> {
  const entries = (await readCapacityBuffers(stack.deps)) ?? [];
  let written = 0;
  for (const { buffer, status } of entries.filter((e) => e.buffer.metadata.namespace === namespace)) {
    if (await writeCapacityBufferStatus(stack.deps, buffer, status)) written += 1;
  }
  return written;
}

const condition = (buffer: CapacityBuffer, type: string) =>
  buffer.status?.conditions?.find((c) => c.type === type);

beforeAll(async () => {
  stack = await startLaunchStack({ env: { FEATURE_GATES: 'CapacityBuffer=true' } });
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
  apps = config.makeApiClient(AppsV1Api);
  custom = config.makeApiClient(CustomObjectsApi);
  await core.createNamespace({ body: { metadata: { name: namespace } } });
  await stack.admin.objects.nodeClasses.create(nodeClass(poolName, 'Ubuntu2204'));
  const pool: NodePool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: poolName },
    spec: {
      template: {
        metadata: { labels: { [stack.runLabel.key]: stack.runLabel.value } },
        spec: {
          nodeClassRef: nodeClassRef(poolName),
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: ['Standard_D8as_v5'] },
          ],
        },
      },
    },
  };
  await stack.admin.objects.nodePools.create(pool);
  const runLabels = { [stack.runLabel.key]: stack.runLabel.value };
  await core.createNamespacedPodTemplate({
    namespace,
    body: { metadata: { name: 'chunk' }, template: chunkTemplate(runLabels) },
  });
  // Workloads whose pods never schedule (no node carries the label) and that no window here selects:
  // only their template and replica count matter. The StatefulSet and the ReplicaSet run no pod at all.
  await apps.createNamespacedDeployment({
    namespace,
    body: {
      metadata: { name: 'web' },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: 'web' } },
        template: {
          metadata: { labels: { app: 'web' } },
          spec: { ...chunkTemplate({}).spec, nodeSelector: { [`example.com/none-${run}`]: 'true' } },
        },
      },
    },
  });
  const idle = (app: string) => ({
    replicas: 0,
    selector: { matchLabels: { app } },
    template: {
      metadata: { labels: { app } },
      spec: { ...chunkTemplate({}).spec, nodeSelector: { [`example.com/none-${run}`]: 'true' } },
    },
  });
  await apps.createNamespacedStatefulSet({
    namespace,
    body: { metadata: { name: 'db' }, spec: { ...idle('db'), serviceName: 'db' } },
  });
  await apps.createNamespacedReplicaSet({ namespace, body: { metadata: { name: 'rs' }, spec: idle('rs') } });
});

afterAll(async () => {
  await core.deleteNamespace({ name: namespace }).catch(() => undefined);
  for (const claim of await stack.deps.objects.nodeClaims.list({
    labelSelector: `karpenter.sh/nodepool=${poolName}`,
  }))
    await stack.deps.objects.nodeClaims.delete(claim.metadata.name);
  await stack.admin.objects.nodePools.delete(poolName);
  await stack.admin.objects.nodeClasses.delete(poolName);
  await stack?.stop();
});

test('the API server applies the CRD as published: default strategy, CEL rules', async () => {
  await createBuffer('defaults', { podTemplateRef: { name: 'chunk' }, replicas: 0 });
  expect((await readBuffer('defaults')).spec.provisioningStrategy).toBe('buffer.x-k8s.io/active-capacity');
  const refused = async (spec: CapacityBufferSpec) => {
    try {
      await createBuffer(`refused-${randomBytes(2).toString('hex')}`, spec);
      return undefined;
    } catch (error) {
      return error instanceof ApiException ? error.code : error;
    }
  };
  expect(
    await refused({
      podTemplateRef: { name: 'chunk' },
      scalableRef: { kind: 'Deployment', name: 'web' },
      replicas: 1,
    }),
  ).toBe(422);
  expect(await refused({ podTemplateRef: { name: 'chunk' } })).toBe(422);
  expect(await refused({ podTemplateRef: { name: 'chunk' }, replicas: -1 })).toBe(422);
});

test('status per referent, written as the shipped identity, and nothing written when nothing changed', async () => {
  await createBuffer('template', { podTemplateRef: { name: 'chunk' }, replicas: 4 });
  await createBuffer('percent', {
    scalableRef: { apiGroup: 'apps', kind: 'Deployment', name: 'web' },
    percentage: 50,
  });
  await createBuffer('missing', {
    scalableRef: { apiGroup: 'apps', kind: 'Deployment', name: 'gone' },
    replicas: 2,
  });
  await createBuffer('job', { scalableRef: { apiGroup: 'batch', kind: 'Job', name: 'j' }, replicas: 2 });
  // Each kind is read with its own get (the ClusterRole grants each), so each has a buffer here.
  await createBuffer('stateful', {
    scalableRef: { apiGroup: 'apps', kind: 'StatefulSet', name: 'db' },
    replicas: 3,
  });
  await createBuffer('replicaset', {
    scalableRef: { apiGroup: 'apps', kind: 'ReplicaSet', name: 'rs' },
    replicas: 1,
  });
  expect(await reconcileStatuses()).toBeGreaterThanOrEqual(6);

  const template = await readBuffer('template');
  expect(template.status).toMatchObject({ replicas: 4, podTemplateRef: { name: 'chunk' } });
  expect(condition(template, 'ReadyForProvisioning')).toMatchObject({ status: 'True', reason: 'Resolved' });
  const percent = await readBuffer('percent');
  expect(percent.status?.replicas).toBe(2);
  expect(percent.status?.podTemplateRef).toBeUndefined();
  expect(condition(await readBuffer('missing'), 'ReadyForProvisioning')).toMatchObject({
    status: 'False',
    reason: 'ScalableRefNotFound',
    message: `Deployment ${namespace}/gone not found`,
  });
  for (const [name, replicas] of [
    ['stateful', 3],
    ['replicaset', 1],
  ] as const) {
    const buffer = await readBuffer(name);
    expect(buffer.status?.replicas).toBe(replicas);
    expect(condition(buffer, 'ReadyForProvisioning')).toMatchObject({ status: 'True', reason: 'Resolved' });
  }
  expect(condition(await readBuffer('job'), 'ReadyForProvisioning')?.message).toMatch(
    /spec.scalableRef.apiGroup "batch"/,
  );
  expect(await reconcileStatuses()).toBe(0);
});

test('a window launches a NodeClaim for the virtual pods alone; the next places them on it in flight', async () => {
  const entries = (await readCapacityBuffers(stack.deps)) ?? [];
  // Only the PodTemplate buffer carries the run label: the Deployment's virtual pods are not this stack's.
  const ours = bufferVirtualPods(entries.filter((e) => e.buffer.metadata.namespace === namespace));
  expect(
    ours.pods.filter((p) => p.metadata.labels?.[stack.runLabel.key] === stack.runLabel.value),
  ).toHaveLength(4);

  const first = await provisionRunWindow(stack, `buffers-1-${run}`);
  expect(first).toMatchObject({ pods: 0, bufferPods: 4, unschedulable: 0 });
  expect(first.created).toHaveLength(1);
  const claim = await stack.deps.objects.nodeClaims.get(first.created[0]!);
  expect(claim?.metadata.labels?.['karpenter.sh/nodepool']).toBe(poolName);
  expect(condition(await readBuffer('template'), 'Provisioning')).toMatchObject({
    status: 'False',
    reason: 'RequiresNewCapacity',
  });

  const second = await provisionRunWindow(stack, `buffers-2-${run}`);
  expect(second).toMatchObject({ created: [], alreadyCreated: 0, bufferPods: 4 });
  expect(condition(await readBuffer('template'), 'Provisioning')).toMatchObject({
    status: 'True',
    reason: 'FitsExistingCapacity',
    message: 'All 4 virtual pods fit on existing capacity',
  });
  // No event for a pod that does not exist.
  const events = await core.listNamespacedEvent({ namespace });
  expect(events.items.filter((e) => e.involvedObject.name?.startsWith('capacity-buffer-'))).toEqual([]);
});
