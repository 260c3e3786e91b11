// The Function App killed with SIGKILL mid-launch, mid-termination and mid-replacement, with its durable history on disk,
// then started again on the same directory: every NodeClaim ends with exactly one VM PUT that succeeded,
// one DELETE that started the deletion, and no VM left behind. The host runs in a child process
// (test/support/host-process.ts) so it can be killed at any line; the ARM emulator stays in this process,
// so its request log spans every host. Real control plane, Azurite, ARM emulator.
import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { QueueClient } from '@azure/storage-queue';
import { KubeConfig } from '@kubernetes/client-node';
import { afterAll, afterEach, beforeAll, expect, inject, test } from 'vitest';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import type { RequestLogEntry } from '../../local/arm-emulator/request-log.js';
import { startKubeletSimulator } from '../../local/kubelet-simulator/index.js';
import { LOCAL_SUBSCRIPTION_ID, localAppSettings } from '../../local/stack/app-settings.js';
import { RUN_LABEL } from '../../local/stack/local-stack.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { toCloudEvent } from '../../shared/events/cloud-event.js';
import { kubeClientsFromConfig } from '../../shared/kube/client.js';
import { karpenterObjects, type KarpenterObjects } from '../../shared/kube/custom-objects.js';
import type { NodeClaim } from '../../shared/models/index.js';
import type { HostProcessConfig } from '../support/host-process.js';
import { sweepLeaseNamespace } from '../support/identities.js';
import { exampleRequirements, nodeClass, nodeClassRef, nodePool } from '../support/fixtures.js';
import { eventually } from '../support/launch-stack.js';
import { devCa } from '../support/dev-ca.js';
import { signalAndWait } from '../support/child-exit.js';

const hostScript = fileURLToPath(new URL('../support/host-process.ts', import.meta.url));
const suffix = randomUUID().slice(0, 6);
const runId = `crash${suffix}`;
const nodePoolName = `crash-${suffix}`;

let emulator: ArmEmulator;
let objects: KarpenterObjects;
let queue: QueueClient;
let stateDirectory: string;
let config: HostProcessConfig;
let host: ChildProcess | undefined;
let lease: Awaited<ReturnType<typeof sweepLeaseNamespace>> | undefined;

beforeAll(async () => {
  const ca = await devCa();
  emulator = await startArmEmulator({
    ca,
    latencies: { createMs: 4_000, deleteMs: 2_000, retryAfterSeconds: 1 },
  });
  stateDirectory = await mkdtemp(join(tmpdir(), 'nodeclaim-crash-'));
  const queueName = `crash-${suffix}`;
  lease = await sweepLeaseNamespace(`crash-sweep-${suffix}`);
  config = {
    appSettings: localAppSettings({
      clusterName: 'test',
      resourceGroup: 'MC_crash_nodes',
      kubeconfigPath: inject('functionsKubeconfigPath'),
      armEndpoint: emulator.url,
      armCaCertPem: emulator.caCertPem,
      bootstrapCaCertPem: ca.certPem,
      storageConnectionString: inject('azuriteConnectionString'),
      queueName,
      unavailableOfferingsTable: `offerings${suffix}`,
      pollIntervalSeconds: 0.5,
      maxPollIntervalSeconds: 1,
    }),
    stateDirectory,
    sweepSchedule: '*/2 * * * * *',
    sweepScope: { nodeClaimSelector: `${RUN_LABEL}=${runId}`, leaseNamespace: lease.namespace },
  };
  const kubeConfig = kubeConfigOf();
  const clients = kubeClientsFromConfig(kubeConfig);
  objects = karpenterObjects(() => Promise.resolve(clients));
  queue = new QueueClient(inject('azuriteConnectionString'), queueName);
  await queue.createIfNotExists();
  await objects.nodeClasses.create(nodeClass(nodePoolName, 'Ubuntu2204'));
  await objects.nodePools.create(nodePool(nodePoolName, nodePoolName, { budgets: [{ nodes: '5' }] }));
});

afterEach(async () => {
  await stopHost();
});

afterAll(async () => {
  await emulator?.stop();
  await lease?.remove();
  if (stateDirectory) await rm(stateDirectory, { recursive: true, force: true });
});

function kubeConfigOf(): KubeConfig {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(inject('kubeconfigPath'));
  return kubeConfig;
}

async function startHost(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', hostScript], {
    env: { ...process.env, HOST_PROCESS_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  host = child;
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new Error(`host process exited with ${code} before it was ready`)));
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) resolve();
    });
  });
}

/** SIGKILL: no cleanup, no flush; whatever the host was doing stops at that line. */
async function killHost(): Promise<void> {
  const child = host;
  host = undefined;
  await signalAndWait(child, 'SIGKILL');
}

async function stopHost(): Promise<void> {
  const child = host;
  host = undefined;
  await signalAndWait(child, 'SIGTERM');
}

async function createNodeClaim(): Promise<NodeClaim> {
  return objects.nodeClaims.create({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: `${nodePoolName}-${randomUUID().slice(0, 6)}`,
      labels: { 'karpenter.sh/nodepool': nodePoolName, [RUN_LABEL]: runId },
    },
    spec: { nodeClassRef: nodeClassRef(nodePoolName), requirements: exampleRequirements },
  });
}

async function announce(nodeClaim: NodeClaim, changeType: 'ADDED' | 'MODIFIED'): Promise<void> {
  const event = toCloudEvent(
    {
      kind: 'NodeClaim',
      name: nodeClaim.metadata.name,
      uid: nodeClaim.metadata.uid ?? '',
      resourceVersion: nodeClaim.metadata.resourceVersion ?? '1',
      changeType,
    },
    { id: randomUUID(), source: '/clusters/test/event-bridge', time: new Date() },
  );
  await queue.sendMessage(JSON.stringify(event));
}

const requests = (method: string, vmName: string): RequestLogEntry[] =>
  emulator.controls.requests({ method, vmName });
const succeeded = (entries: RequestLogEntry[]) => entries.filter((e) => e.status >= 200 && e.status < 300);
const describeLog = (entries: RequestLogEntry[]) =>
  entries.map((e) => `${e.method} ${e.status || 'none'}${e.hung ? ' (hung)' : ''}`).join(', ');

async function launchedTrue(name: string): Promise<NodeClaim> {
  return eventually(
    async () => {
      const current = await objects.nodeClaims.get(name);
      return findCondition(current?.status?.conditions, 'Launched')?.status === 'True' ? current : undefined;
    },
    `${name} Launched=True`,
    90_000,
  );
}

test('killed while its VM PUT is in flight and again while the launch monitor polls; then killed mid-termination: one PUT, one DELETE, no VM left', async () => {
  const nodeClaim = await createNodeClaim();
  const vmName = vmNameFor(nodeClaim.metadata.name);
  // ARM takes the PUT but answers only after 5 s: the host dies having created the VM without knowing it.
  emulator.controls.injectFault({
    match: { vmName },
    effect: { type: 'hang', requestKind: 'putVm', seconds: 5 },
    times: 1,
  });
  // The creation is held until the second kill, so that kill lands while the launch monitor still
  // polls, however long the host starts and the sweep's launch step (10 s grace) take.
  emulator.controls.holdProvisioning(vmName);
  await startHost();
  await announce(nodeClaim, 'ADDED');
  await eventually(() => (requests('PUT', vmName).length > 0 ? true : undefined), 'the PUT', 60_000);
  await killHost();

  // A new host: the message is still leased by the dead one, so the sweep's launch step finds the NodeClaim.
  await startHost();
  await eventually(
    async () => (await objects.nodeClaims.get(nodeClaim.metadata.name))?.status?.providerID,
    'providerID',
    90_000,
  );
  // Killed again while the launch monitor's history is on disk and the VM is still being created.
  expect(emulator.controls.vms().find((vm) => vm.name === vmName)?.provisioningState).toBe('Creating');
  await killHost();
  emulator.controls.releaseProvisioning(vmName);
  await startHost();
  await launchedTrue(nodeClaim.metadata.name);
  console.log(`mid-launch kills: ARM saw ${describeLog(requests('PUT', vmName))}`);
  expect(succeeded(requests('PUT', vmName))).toHaveLength(1);

  // Termination: killed right after its DELETE reached ARM.
  await objects.nodeClaims.delete(nodeClaim.metadata.name);
  await announce(nodeClaim, 'MODIFIED');
  await eventually(() => (requests('DELETE', vmName).length > 0 ? true : undefined), 'the DELETE', 90_000);
  await killHost();
  await startHost();
  await eventually(
    async () => ((await objects.nodeClaims.get(nodeClaim.metadata.name)) ? undefined : true),
    'NodeClaim gone',
    120_000,
  );
  await eventually(
    () => (emulator.controls.vms().some((vm) => vm.name === vmName) ? undefined : true),
    'VM gone',
    30_000,
  );
  const deletes = requests('DELETE', vmName);
  console.log(`mid-termination kill: ARM saw ${describeLog(deletes)}`);
  // Every DELETE after the first found the VM deleting already (or gone): one started the deletion.
  expect(deletes.filter((e) => e.status === 202)).toHaveLength(1);
  expect(succeeded(requests('PUT', vmName))).toHaveLength(1);
  expect(emulator.controls.vms().filter((vm) => vm.name === vmName)).toHaveLength(0);
}, 400_000);

test('killed mid-replacement (old node tainted, replacement launching): the replacement completes with one PUT per NodeClaim, one DELETE for the old VM, no VM left behind', async () => {
  const poolName = `crashdrift-${suffix}`;
  await objects.nodeClasses.create(nodeClass(poolName, 'Ubuntu2204'));
  await objects.nodePools.create({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name: poolName },
    spec: {
      replicas: 1,
      disruption: { budgets: [{ nodes: '1' }] },
      template: {
        metadata: { labels: { [RUN_LABEL]: runId } },
        spec: { nodeClassRef: nodeClassRef(poolName), requirements: exampleRequirements },
      },
    },
  });
  const simulator = await startKubeletSimulator({
    kubeconfigPath: inject('kubeconfigPath'),
    emulator,
    subscriptionId: LOCAL_SUBSCRIPTION_ID,
    resourceGroup: 'MC_crash_nodes',
    bootDelayMs: 300,
    readyDelayMs: 200,
  });
  const claimsOfPool = async () =>
    (await objects.nodeClaims.list()).filter(
      (c) => c.metadata.labels?.['karpenter.sh/nodepool'] === poolName,
    );
  try {
    emulator.controls.setLatencies({ createMs: 2_000 });
    await startHost();
    // The static NodePool's one NodeClaim, launched, registered and initialized by the host.
    const old = await eventually(
      async () =>
        (await claimsOfPool()).find(
          (c) => findCondition(c.status?.conditions, 'Initialized')?.status === 'True',
        ),
      'the first NodeClaim Initialized',
      120_000,
    );
    const oldVm = vmNameFor(old.metadata.name);

    // Drift, with the replacement's creation held so the kill lands while it is still launching.
    const replacements = `*${poolName}*`;
    emulator.controls.holdProvisioning(replacements);
    await objects.nodeClasses.mergePatch(poolName, { spec: { imageFamily: 'AzureLinux' } });
    const replacement = await eventually(
      async () =>
        (await claimsOfPool()).find((c) => c.metadata.uid !== old.metadata.uid && c.status?.providerID),
      'the replacement launching',
      120_000,
    );
    const replacementVm = vmNameFor(replacement.metadata.name);
    const { core } = kubeClientsFromConfig(kubeConfigOf());
    const oldNode = (await core.listNode()).items.find(
      (n) => n.spec?.providerID?.toLowerCase() === old.status?.providerID?.toLowerCase(),
    );
    expect(oldNode?.spec?.taints?.some((t) => t.key === 'karpenter.sh/disrupted')).toBe(true);
    expect(emulator.controls.vms().find((vm) => vm.name === replacementVm)?.provisioningState).toBe(
      'Creating',
    );
    await killHost();

    emulator.controls.releaseProvisioning(replacements);
    await startHost();
    await eventually(
      async () => ((await objects.nodeClaims.get(old.metadata.name)) ? undefined : true),
      'the old NodeClaim gone',
      180_000,
    );
    await eventually(
      async () => {
        const current = await objects.nodeClaims.get(replacement.metadata.name);
        return findCondition(current?.status?.conditions, 'Initialized')?.status === 'True'
          ? current
          : undefined;
      },
      'the replacement Initialized',
      60_000,
    );
    await eventually(
      () => (emulator.controls.vms().some((vm) => vm.name === oldVm) ? undefined : true),
      'the old VM gone',
      30_000,
    );
    console.log(
      `mid-replacement kill: old ${describeLog([...requests('PUT', oldVm), ...requests('DELETE', oldVm)])}; replacement ${describeLog(requests('PUT', replacementVm))}`,
    );
    expect(succeeded(requests('PUT', oldVm))).toHaveLength(1);
    expect(succeeded(requests('PUT', replacementVm))).toHaveLength(1);
    expect(requests('DELETE', oldVm).filter((e) => e.status === 202)).toHaveLength(1);
    expect(requests('DELETE', replacementVm)).toHaveLength(0);
    // No orphan: the pool's only VM is the replacement's, and exactly one NodeClaim remains.
    const poolClaims = await claimsOfPool();
    expect(poolClaims.map((c) => c.metadata.name)).toEqual([replacement.metadata.name]);
    const vmsOfPool = emulator.controls
      .vms()
      .filter((vm) => vm.name === oldVm || vm.name === replacementVm)
      .map((vm) => vm.name);
    expect(vmsOfPool).toEqual([replacementVm]);
  } finally {
    // Cleaned up while a host runs, so termination removes the VM, the Node and the finalizer.
    await objects.nodePools.delete(poolName).catch(() => undefined);
    for (const claim of await claimsOfPool()) {
      await objects.nodeClaims.delete(claim.metadata.name).catch(() => undefined);
    }
    if (host) {
      await eventually(
        async () => ((await claimsOfPool()).length === 0 ? true : undefined),
        'cleanup',
        60_000,
      ).catch(() => undefined);
    }
    await stopHost();
    await simulator.stop();
  }
}, 600_000);
