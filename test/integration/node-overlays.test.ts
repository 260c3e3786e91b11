// NodeOverlays on the real control plane (the CRD as the API server serves it), with the ARM emulator's
// SKU catalog and Retail Prices and the in-process host launching what provisioning created: a 30% price
// cut on one series changes which size provisioning and launch pick; an overlay adding
// `example.com/fpga: 2` lets a pod that requests one get a NodeClaim that launches, where without it the
// pod gets FailedScheduling; overlays of equal weight on the same offerings get Conflict.
// Every overlay here selects only this file's NodePool (karpenter.sh/nodepool), so the shared control
// plane's other NodePools never see them.
import { randomBytes } from 'node:crypto';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { nodeOverlayObjects } from '../../shared/cloudprovider/node-overlays.js';
import { reconcileNodeOverlayStatuses } from '../../shared/lifecycle/status/node-overlay-status.js';
import type { NodeClaim, NodePool } from '../../shared/models/karpenter.js';
import type { NodeOverlay, NodeOverlaySpec } from '../../shared/models/node-overlay.js';
import { nodeClass, nodeClassRef } from '../support/fixtures.js';
import { eventually, startLaunchStack, type LaunchStack } from '../support/launch-stack.js';
import { pollUntilDefined } from '../support/poll.js';
import { provisionRunWindow } from '../support/provision-window.js';

const run = randomBytes(3).toString('hex');
const namespace = 'default';
const poolName = `overlay-${run}`;
const CHEAPER = 'Standard_D2as_v5';
const DISCOUNTED = 'Standard_D2s_v5';
let stack: LaunchStack;
let core: CoreV1Api;
const podNames: string[] = [];
const overlayNames: string[] = [];

const forThisPool = { key: 'karpenter.sh/nodepool', operator: 'In' as const, values: [poolName] };

function overlay(
  name: string,
  spec: Omit<NodeOverlaySpec, 'requirements'> & Partial<NodeOverlaySpec>,
): NodeOverlay {
  return {
    apiVersion: 'karpenter.sh/v1alpha1',
    kind: 'NodeOverlay',
    metadata: { name: `${name}-${run}` },
    spec: { ...spec, requirements: [forThisPool, ...(spec.requirements ?? [])] },
  };
}

async function createOverlay(body: NodeOverlay): Promise<void> {
  await nodeOverlayObjects(stack.admin).create(body);
  overlayNames.push(body.metadata.name);
}

async function pendingPod(name: string, requests: Record<string, string>, limits?: Record<string, string>) {
  const labels = { [stack.runLabel.key]: stack.runLabel.value };
  const body: V1Pod = {
    metadata: { name: `${name}-${run}`, namespace, labels },
    spec: {
      nodeSelector: { 'karpenter.sh/nodepool': poolName },
      containers: [
        {
          name: 'app',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests, ...(limits && { limits }) },
        },
      ],
    },
  };
  await core.createNamespacedPod({ namespace, body });
  podNames.push(body.metadata!.name!);
  await pollUntilDefined(`the scheduler to mark ${name} Unschedulable`, async () => {
    const pod = await core.readNamespacedPod({ name: body.metadata!.name!, namespace });
    return pod.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable')
      ? true
      : undefined;
  });
  return body.metadata!.name!;
}

/** One provisioning window over this file's pods. */
const provisionWindow = (windowId: string) => provisionRunWindow(stack, `${windowId}-${run}`);

/** Launches a NodeClaim through the host, as its ADDED event would, and returns it once it has a VM. */
async function launched(name: string): Promise<NodeClaim> {
  const claim = await stack.deps.objects.nodeClaims.get(name);
  await stack.publish({
    kind: 'NodeClaim',
    name,
    uid: claim?.metadata.uid ?? '',
    resourceVersion: claim?.metadata.resourceVersion ?? '1',
  });
  return eventually(async () => {
    const current = await stack.deps.objects.nodeClaims.get(name);
    return current?.status?.providerID ? current : undefined;
  }, `${name} launched`);
}

beforeAll(async () => {
  stack = await startLaunchStack({ env: { FEATURE_GATES: 'NodeOverlay=true' } });
  const config = new KubeConfig();
  config.loadFromFile(inject('kubeconfigPath'));
  core = config.makeApiClient(CoreV1Api);
  await stack.admin.objects.nodeClasses.create(nodeClass(`overlay-${run}`, 'Ubuntu2204'));
  const pool: NodePool = {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: poolName },
    spec: {
      template: {
        metadata: { labels: { [stack.runLabel.key]: stack.runLabel.value } },
        spec: {
          nodeClassRef: nodeClassRef(`overlay-${run}`),
          requirements: [
            { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
            { key: 'node.kubernetes.io/instance-type', operator: 'In', values: [CHEAPER, DISCOUNTED] },
          ],
        },
      },
    },
  };
  await stack.admin.objects.nodePools.create(pool);
  await eventually(
    () => (stack.deps.azure.pricing.prices().source === 'retail-prices-api' ? true : undefined),
    'prices refreshed from the emulator',
  );
});

async function deletePods(): Promise<void> {
  for (const name of podNames.splice(0)) {
    await core.deleteNamespacedPod({ name, namespace, gracePeriodSeconds: 0 }).catch(() => {});
  }
  await pollUntilDefined('the pods to be gone', async () => {
    const listed = await core.listNamespacedPod({
      namespace,
      labelSelector: `${stack.runLabel.key}=${stack.runLabel.value}`,
    });
    return listed.items.length === 0 ? true : undefined;
  });
}

async function deleteNodeClaims(): Promise<void> {
  for (const claim of await stack.deps.objects.nodeClaims.list({
    labelSelector: `karpenter.sh/nodepool=${poolName}`,
  }))
    await stack.deps.objects.nodeClaims.delete(claim.metadata.name);
}

afterAll(async () => {
  await deletePods().catch(() => {});
  for (const name of overlayNames) await nodeOverlayObjects(stack.admin).delete(name);
  await deleteNodeClaims();
  await stack.admin.objects.nodePools.delete(poolName);
  await stack.admin.objects.nodeClasses.delete(`overlay-${run}`);
  await stack?.stop();
});

test(
  'a 30% price cut on one series changes the size provisioning and launch pick',
  { timeout: 180_000 },
  async () => {
    const prices = stack.deps.azure.pricing.prices().onDemand;
    const [cheaper, discounted] = [prices.get(CHEAPER), prices.get(DISCOUNTED)];
    // The premise: D2as_v5 is cheaper as listed, and D2s_v5 at 70% is cheaper than D2as_v5.
    expect(cheaper).toBeLessThan(discounted!);
    expect(discounted! * 0.7).toBeLessThan(cheaper!);

    // 1500m fills a 2-vCPU node, so each window's pod needs its own NodeClaim.
    await pendingPod('before', { cpu: '1500m' });
    const before = await provisionWindow('before');
    expect(before.created).toHaveLength(1);
    expect((await launched(before.created[0]!)).metadata.labels?.['node.kubernetes.io/instance-type']).toBe(
      CHEAPER,
    );

    await createOverlay(
      overlay('dsv5-discount', {
        requirements: [
          {
            key: 'node.kubernetes.io/instance-type',
            operator: 'In',
            values: [DISCOUNTED, 'Standard_D4s_v5'],
          },
        ],
        priceAdjustment: '-30%',
      }),
    );
    await pendingPod('after', { cpu: '1500m' });
    const after = await provisionWindow('after');
    expect(after.created).toHaveLength(1);
    expect(after.launchPricePerHour).toBeCloseTo(discounted! * 0.7, 6);
    expect((await launched(after.created[0]!)).metadata.labels?.['node.kubernetes.io/instance-type']).toBe(
      DISCOUNTED,
    );
    // Gone before the next test, so its pod gets a NodeClaim of its own, not these empty in-flight ones.
    await deletePods();
    await deleteNodeClaims();
  },
);

test(
  'an overlay adding example.com/fpga: 2 lets a pod that requests one get a node',
  { timeout: 180_000 },
  async () => {
    const fpga = { cpu: '500m', 'example.com/fpga': '1' };
    await pendingPod('fpga', fpga, { 'example.com/fpga': '1' });
    const without = await provisionWindow('fpga-without');
    expect(without).toMatchObject({ created: [], unschedulable: 1 });

    await createOverlay(
      overlay('fpga', {
        requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [CHEAPER] }],
        capacity: { 'example.com/fpga': '2' },
      }),
    );
    const withOverlay = await provisionWindow('fpga-with');
    expect(withOverlay).toMatchObject({ unschedulable: 0 });
    expect(withOverlay.created).toHaveLength(1);
    const claim = await launched(withOverlay.created[0]!);
    expect(claim.spec.resources?.requests?.['example.com/fpga']).toBe('1');
    expect(claim.metadata.labels?.['node.kubernetes.io/instance-type']).toBe(CHEAPER);

    // The next window places the pod on an in-flight NodeClaim of the overlaid size (its VM reports no
    // FPGA yet) rather than making another.
    const again = await provisionWindow('fpga-again');
    expect(again).toMatchObject({ created: [], onExisting: 1 });
  },
);

test('overlays of equal weight on the same offerings: the later name wins, the other gets Conflict', async () => {
  const same = (name: string) =>
    overlay(name, {
      requirements: [{ key: 'node.kubernetes.io/instance-type', operator: 'In', values: [CHEAPER] }],
      weight: 50,
      price: '0.01',
    });
  await createOverlay(same('conflict-a'));
  await createOverlay(same('conflict-b'));
  await reconcileNodeOverlayStatuses(stack.deps, await stack.deps.objects.nodePools.list());
  const objects = nodeOverlayObjects(stack.admin);
  const condition = async (name: string) =>
    (await objects.get(`${name}-${run}`))?.status?.conditions?.find((c) => c.type === 'ValidationSucceeded');
  expect(await condition('conflict-a')).toMatchObject({ status: 'False', reason: 'Conflict' });
  expect(await condition('conflict-b')).toMatchObject({ status: 'True' });
  expect(await condition('dsv5-discount')).toMatchObject({ status: 'True' });
  // The API server refuses what the CRD's rules refuse, before the app ever sees it.
  await expect(objects.create(overlay('both-prices', { price: '1', priceAdjustment: '+1' }))).rejects.toThrow(
    /cannot set both/,
  );
  await expect(objects.create(overlay('cpu', { capacity: { cpu: '1' } }))).rejects.toThrow(/restricted/);
});
