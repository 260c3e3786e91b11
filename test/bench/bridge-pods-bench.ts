// The event bridge's memory with 20,000 pending pods, against a real kube-apiserver (no scheduler: the
// pods stay unbound, which is what the bridge's pod watch selects with `spec.nodeName=`). The pods are
// realistic Deployment pods (labels, owner reference, two containers with env, ports, probes and
// resources), so the figure reflects the slim projection the informer caches, not toy objects.
//
// The bridge runs as it ships (bridge-process.ts): compiled by tsc, started with the image's command and
// Node flags, configured by the Deployment's ConfigMap, sending to a real queue (Azurite). Its peak RSS is
// set beside the Deployment's memory limit, read from infra/k8s/bridge/deployment.yaml, with the heap V8
// reports and the same bridge idle (before any pod exists), so the difference is what it holds per pod.
// Run alone with `npx tsx test/bench/bridge-pods-bench.ts [pods]`; `npm run bench` runs it with 20,000.
import { fileURLToPath } from 'node:url';
import { QueueServiceClient } from '@azure/storage-queue';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { startAzurite } from '../../local/azurite/launcher.js';
import { startControlPlane } from '../../local/control-plane/launcher.js';
import { findFreeLoopbackPorts } from '../../local/control-plane/ports.js';
import type { BridgeRun } from './bridge-process.js';
import { buildBridge, deploymentMemoryLimitBytes, runImageBridge } from './bridge-process.js';

/**
 * Peak RSS within three quarters of the Deployment's limit: the rest is room for a relist while the old
 * cache is still held, a burst of watch events, and the page cache the cgroup counts too.
 */
const GOAL_SHARE = 0.75;

export function realisticPod(index: number): V1Pod {
  const app = `shop-${index % 40}`;
  return {
    metadata: {
      name: `${app}-7d9c8b6f5-${index.toString(36).padStart(5, '0')}`,
      labels: { app, 'pod-template-hash': '7d9c8b6f5', tier: 'web', team: `team-${index % 7}` },
      annotations: { 'prometheus.io/scrape': 'true', 'prometheus.io/port': '9090' },
      ownerReferences: [
        {
          apiVersion: 'apps/v1',
          kind: 'ReplicaSet',
          name: `${app}-7d9c8b6f5`,
          uid: `00000000-0000-0000-0000-${String(index % 40).padStart(12, '0')}`,
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    spec: {
      nodeSelector: { 'karpenter.sh/nodepool': 'bench-absent' },
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          topologyKey: 'topology.kubernetes.io/zone',
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: { app } },
        },
      ],
      containers: ['app', 'sidecar'].map((name) => ({
        name,
        image: `registry.example.com/${app}/${name}:1.2.3`,
        ports: [{ containerPort: name === 'app' ? 8080 : 9090, protocol: 'TCP' }],
        env: Array.from({ length: 6 }, (_, i) => ({ name: `SETTING_${i}`, value: `value-${i}-${app}` })),
        resources: { requests: { cpu: '250m', memory: '512Mi' }, limits: { memory: '1Gi' } },
        readinessProbe: {
          httpGet: { path: '/healthz', port: name === 'app' ? 8080 : 9090 },
          periodSeconds: 10,
        },
      })),
    },
  };
}

export async function runBridgePodsBench(pods = 20_000): Promise<void> {
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  log('building the bridge as the image does (tsc -p tsconfig.build.json)');
  await buildBridge();
  // The CRDs too: the bridge is ready only once every informer synced, NodeClaims and NodePools as well.
  const controlPlane = await startControlPlane({
    scheduler: false,
    controllerManager: false,
    crdDirectories: [fileURLToPath(new URL('../../infra/k8s/crds/', import.meta.url))],
    log,
  });
  const azurite = await startAzurite();
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(controlPlane.kubeconfigPath);
    const core = kubeConfig.makeApiClient(CoreV1Api);
    const queues = QueueServiceClient.fromConnectionString(azurite.connectionString);
    const run = async (queueName: string): Promise<BridgeRun & { messages: number }> => {
      const queue = queues.getQueueClient(queueName);
      await queue.createIfNotExists();
      const [healthPort] = await findFreeLoopbackPorts(1);
      const result = await runImageBridge({
        kubeconfigPath: controlPlane.kubeconfigPath,
        connectionString: azurite.connectionString,
        queueName,
        healthPort: healthPort!,
      });
      return { ...result, messages: (await queue.getProperties()).approximateMessagesCount ?? 0 };
    };
    // The same bridge before any pod exists: what the runtime, the client and the idle bridge take.
    const idle = await run('bench-idle');

    const namespace = 'bench-pods';
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    // No controller-manager here to create the namespace's default ServiceAccount, which pod admission needs.
    await core.createNamespacedServiceAccount({ namespace, body: { metadata: { name: 'default' } } });
    const started = Date.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: 32 }, async () => {
        while (next < pods) {
          const index = next++;
          await core.createNamespacedPod({ namespace, body: realisticPod(index) });
        }
      }),
    );
    log(`${pods} pending pods created in ${((Date.now() - started) / 1000).toFixed(1)} s`);
    const sample = await core.listNamespacedPod({ namespace, limit: 500 });
    const jsonBytesPerPod = Buffer.byteLength(JSON.stringify(sample.items)) / sample.items.length;

    // No scheduler has marked the pods Unschedulable, so none is provisionable and the bridge caches them
    // without announcing them (bridge/relevance.ts): the figure is the list and the cache, not the outbox.
    const loaded = await run('bench-pods');
    const limit = deploymentMemoryLimitBytes();
    const mib = (bytes: number) => (bytes / 2 ** 20).toFixed(0);
    const share = (bytes: number) => `${((bytes / limit) * 100).toFixed(0)}%`;
    // A bridge that never ran a full collection has no live-heap figure.
    const perPod =
      idle.liveHeapBytes > 0 ? ((loaded.liveHeapBytes - idle.liveHeapBytes) / pods).toFixed(0) : 'n/a ';
    const flags = loaded.nodeFlags.length > 0 ? loaded.nodeFlags.join(' ') : 'no Node flags';
    process.stdout.write(
      `\nEvent bridge with ${pods.toLocaleString('en-US')} pending pods, compiled and run as its image runs it ` +
        `(node ${process.versions.node}, ${flags}), its queue on Azurite\n` +
        `  start to every informer synced: ${(loaded.settleMs / 1000).toFixed(1)} s, ${loaded.messages} messages sent; ` +
        `heap: peak ${mib(loaded.peakHeapBytes)} MiB, live after the last full collection ${mib(loaded.liveHeapBytes)} MiB ` +
        `(idle bridge ${idle.liveHeapBytes > 0 ? `${mib(idle.liveHeapBytes)} MiB` : 'no full collection'}; ≈${perPod} B per pod) against ≈${(jsonBytesPerPod / 1024).toFixed(1)} KB ` +
        `of JSON per pod from the API server\n` +
        `  RSS: peak ${mib(loaded.peakRssBytes)} MiB, settled ${mib(loaded.settledRssBytes)} MiB ` +
        `(idle bridge: peak ${mib(idle.peakRssBytes)} MiB)\n` +
        `  goal: peak RSS ≤ ${(GOAL_SHARE * 100).toFixed(0)}% of the Deployment's ${mib(limit)} MiB limit (≤ ${mib(limit * GOAL_SHARE)} MiB) → ` +
        `peak RSS ÷ limit = ${mib(loaded.peakRssBytes)} ÷ ${mib(limit)} MiB = ${share(loaded.peakRssBytes)} → ` +
        `${loaded.peakRssBytes <= limit * GOAL_SHARE ? 'met' : loaded.peakRssBytes <= limit ? 'MISSED (within the limit, without room)' : 'MISSED (over the limit: an OOM kill)'}\n`,
    );
  } finally {
    await azurite.stop();
    await controlPlane.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runBridgePodsBench(Number(process.argv[2] ?? 20_000));
}
