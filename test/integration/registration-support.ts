// Shared by the registration and sweep integration tests: lifecycle dependencies pointed at the shared
// real control plane, and objects created the way the rest of the system would create them (a NodeClaim
// with the providerID launch writes; a Node as a kubelet registers it).
import { randomBytes } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { CoreV1Api, KubeConfig, PatchStrategy, setHeaderOptions, type V1Node } from '@kubernetes/client-node';
import type { TokenCredential } from '@azure/identity';
import { localClusterSettings } from '../../local/stack/app-settings.js';
import { loadSettings } from '../../shared/config/settings.js';
import {
  createDependencies,
  type AzureDependencies,
  type LifecycleDependencies,
} from '../../shared/lifecycle/dependencies.js';
import type { NodeClaim } from '../../shared/models/index.js';
import type { Taint } from '../../shared/models/kube.js';
import { createMetrics, type Metrics } from '../../shared/observability/metrics.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { OrchestrationClient } from '../../shared/runtime/definitions.js';

export const subscriptionId = '00000000-0000-0000-0000-0000000000aa';
export const resourceGroup = 'rg-registration-test';

export const fixedTokenCredential: TokenCredential = {
  getToken: () => Promise.resolve({ token: 'test-token', expiresOnTimestamp: Date.now() + 3_600_000 }),
};

export function uniqueSuffix(): string {
  return randomBytes(3).toString('hex');
}

export interface TestDependencies {
  deps: AzureDependencies;
  metrics: Metrics;
  core: CoreV1Api;
}

export function testDependencies(options: {
  /** Admin: the returned `core`, for the test's set-up (kubelet's Nodes) and assertions. */
  kubeconfigPath: string;
  /** What the lifecycle under test acts as: the Function App's shipped identity. */
  appKubeconfigPath: string;
  caCertPath: string;
  armEndpoint?: string;
  storageConnectionString?: string;
  now?: () => Date;
}): TestDependencies {
  const settings = loadSettings({
    KUBECONFIG: options.appKubeconfigPath,
    CLUSTER_NAME: 'registration-test',
    ...localClusterSettings(subscriptionId, resourceGroup),
    AZURE_SUBSCRIPTION_ID: subscriptionId,
    AZURE_NODE_RESOURCE_GROUP: resourceGroup,
    AZURE_LOCATION: 'westus2',
    ARM_ENDPOINT: options.armEndpoint ?? 'https://127.0.0.1:1',
    // Never the public Retail Prices API from a test; where this answers nothing, prices stay static.
    RETAIL_PRICES_ENDPOINT: options.armEndpoint ?? 'https://127.0.0.1:1',
    AZURE_SUBNET_ID: `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
    NODE_SSH_PUBLIC_KEY: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIHRlc3Q= test',
    BOOTSTRAP_API_SERVER_URL: 'https://127.0.0.1:6443',
    BOOTSTRAP_CA_CERT: readFileSync(options.caCertPath, 'utf8'),
    AzureWebJobsStorage: options.storageConnectionString ?? 'UseDevelopmentStorage=true',
    LAUNCH_POLL_INTERVAL_SECONDS: '1',
  });
  const metrics = createMetrics(silentLogger);
  const deps = createDependencies(settings, {
    credential: fixedTokenCredential,
    log: silentLogger,
    metrics,
    ...(options.now ? { now: options.now } : {}),
    // These tests assert what one sweep does right after a write: they read the way that sees it.
    clusterReads: 'list',
  });
  const config = new KubeConfig();
  config.loadFromFile(options.kubeconfigPath);
  return { deps, metrics, core: config.makeApiClient(CoreV1Api) };
}

/** Cleans up after a test file: its Nodes (without the finalizer registration puts on them) and NodeClaims. */
export async function deleteNodesAndNodeClaims(created: {
  core: CoreV1Api;
  deps: LifecycleDependencies;
  nodes: readonly string[];
  nodeClaims: readonly string[];
}): Promise<void> {
  const { core, deps } = created;
  for (const name of created.nodes) {
    // Registration put the termination finalizer on the Node; take it off so the delete completes.
    await core
      .patchNode(
        { name, body: [{ op: 'remove', path: '/metadata/finalizers' }] },
        setHeaderOptions('Content-Type', PatchStrategy.JsonPatch),
      )
      .catch(() => undefined);
    await core.deleteNode({ name }).catch(() => undefined);
  }
  for (const name of created.nodeClaims) await deps.objects.nodeClaims.delete(name).catch(() => undefined);
}

/**
 * For sweeps that must not touch orchestrations (no NodeClaim in them is deleted or gone): any call is a
 * test failure, not a stand-in for the orchestration runtime.
 */
export const orchestrationsMustNotBeUsed: OrchestrationClient = {
  startNew: (name) => Promise.reject(new Error(`unexpected orchestration start: ${name}`)),
  getStatus: (id) => Promise.reject(new Error(`unexpected orchestration status read: ${id}`)),
  raiseEvent: (id) => Promise.reject(new Error(`unexpected orchestration event: ${id}`)),
  terminate: (id) => Promise.reject(new Error(`unexpected orchestration terminate: ${id}`)),
  purge: (id) => Promise.reject(new Error(`unexpected orchestration purge: ${id}`)),
};

export function vmNameOf(nodeClaimName: string): string {
  return `aks-${nodeClaimName}`;
}

export function providerIdOf(nodeClaimName: string): string {
  return `azure:///subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Compute/virtualMachines/${vmNameOf(nodeClaimName)}`;
}

export interface NodeClaimInput {
  name: string;
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  taints?: Taint[];
  startupTaints?: Taint[];
  /** When the Launched condition became True; default now. */
  launchedAt?: Date;
  finalizers?: string[];
  requests?: Record<string, string>;
}

/** A NodeClaim as launch leaves it: labels, finalizer, providerID and Launched=True. */
export async function createLaunchedNodeClaim(
  deps: LifecycleDependencies,
  input: NodeClaimInput,
): Promise<NodeClaim> {
  const created = await deps.objects.nodeClaims.create({
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name: input.name,
      labels: input.labels ?? {},
      ...(input.annotations ? { annotations: input.annotations } : {}),
      ...(input.finalizers ? { finalizers: input.finalizers } : {}),
    },
    spec: {
      nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: 'default' },
      requirements: [{ key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] }],
      ...(input.taints ? { taints: input.taints } : {}),
      ...(input.startupTaints ? { startupTaints: input.startupTaints } : {}),
      ...(input.requests ? { resources: { requests: input.requests } } : {}),
    },
  });
  const launchedAt = (input.launchedAt ?? new Date()).toISOString().replace(/\.\d{3}Z$/, 'Z');
  return deps.objects.nodeClaims.mergePatchStatus(created.metadata.name, {
    status: {
      providerID: providerIdOf(input.name),
      conditions: [
        { type: 'Launched', status: 'True', reason: 'Launched', message: '', lastTransitionTime: launchedAt },
      ],
    },
  });
}

/** A Node as a kubelet registers it: its providerID, the labels it may set, the taints it was told to. */
export function kubeletNode(input: {
  name: string;
  providerID: string;
  labels?: Record<string, string>;
  taints?: Taint[];
}): V1Node {
  return {
    apiVersion: 'v1',
    kind: 'Node',
    metadata: { name: input.name, labels: { 'kubernetes.io/hostname': input.name, ...input.labels } },
    spec: {
      providerID: input.providerID,
      taints: (input.taints ?? []).map((t) => ({ ...t, timeAdded: undefined })),
    },
  };
}

export const unregisteredTaint: Taint = { key: 'karpenter.sh/unregistered', effect: 'NoExecute' };

/** What the kubelet reports once it runs: Ready, with allocatable capacity the scheduler can use. */
export async function reportNodeReady(
  core: CoreV1Api,
  name: string,
  allocatable: Record<string, string> = { cpu: '4', memory: '16Gi', pods: '110' },
): Promise<void> {
  const now = new Date();
  await core.patchNodeStatus(
    {
      name,
      body: {
        status: {
          capacity: allocatable,
          allocatable,
          conditions: [
            {
              type: 'Ready',
              status: 'True',
              reason: 'KubeletReady',
              message: 'kubelet is posting ready status',
              lastHeartbeatTime: now,
              lastTransitionTime: now,
            },
          ],
        },
      },
    },
    setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
  );
}
