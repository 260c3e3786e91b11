// The event bridge's memory with 20,000 pending pods, against a real kube-apiserver (no scheduler: the
// pods stay unbound, which is what the bridge's pod watch selects with `spec.nodeName=`). The pods are
// realistic Deployment pods (labels, owner reference, two containers with env, ports, probes and
// resources), so the figure reflects the slim projection the informer caches, not toy objects.
//
// Measured: the bridge's heap growth from start to synced (after a full collection), per pod, and how long
// the initial paginated list took; beside it, the JSON size of the same pods as the API server sends them.
// Run alone with `npx tsx --expose-gc test/bench/bridge-pods-bench.ts [pods]`; `npm run bench` runs it
// with 20,000.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { startBridge } from '../../bridge/bridge.js';
import { startControlPlane } from '../../local/control-plane/launcher.js';
import { silentLogger } from '../../shared/observability/logger.js';

/** Leaves room for the runtime (≈60 MB) within the bridge Deployment's 384Mi memory limit. */
const GOAL_MB = 300;

function realisticPod(index: number): V1Pod {
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

function settledHeap(): number {
  (globalThis as { gc?: () => void }).gc?.();
  return process.memoryUsage().heapUsed;
}

export async function runBridgePodsBench(pods = 20_000): Promise<void> {
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const controlPlane = await startControlPlane({ scheduler: false, controllerManager: false, log });
  try {
    const kubeConfig = new KubeConfig();
    kubeConfig.loadFromFile(controlPlane.kubeconfigPath);
    const core = kubeConfig.makeApiClient(CoreV1Api);
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

    const heapBefore = settledHeap();
    const syncStarted = Date.now();
    const bridge = await startBridge({
      queue: {
        mode: 'connectionString',
        connectionString: 'UseDevelopmentStorage=true',
        queueName: 'unused',
      },
      kubernetes: { mode: 'kubeConfig', kubeConfig },
      source: '/bench/event-bridge',
      logger: silentLogger,
      queueSink: { send: () => Promise.resolve(), probe: () => Promise.resolve() },
    });
    try {
      while (!bridge.stats().informers.Pod.synced || bridge.stats().informers.Pod.cached < pods)
        await sleep(50);
      const syncMs = Date.now() - syncStarted;
      await sleep(500);
      const heapMb = (settledHeap() - heapBefore) / 2 ** 20;
      const rssMb = process.memoryUsage().rss / 2 ** 20;
      const perPodBytes = ((heapMb * 2 ** 20) / pods).toFixed(0);
      process.stdout.write(
        `\nEvent bridge with ${pods.toLocaleString('en-US')} pending pods (watch spec.nodeName=, slim projection)\n` +
          `  initial list + sync: ${(syncMs / 1000).toFixed(1)} s; heap growth ${heapMb.toFixed(1)} MB (≈${perPodBytes} B per pod) ` +
          `against ≈${(jsonBytesPerPod / 1024).toFixed(1)} KB of JSON per pod from the API server; process RSS ${rssMb.toFixed(0)} MB\n` +
          `  goal: bridge heap ≤ ${GOAL_MB} MB at ${pods.toLocaleString('en-US')} pods (within the Deployment's 384Mi limit) → ` +
          `${heapMb <= GOAL_MB ? 'met' : 'MISSED'}\n`,
      );
    } finally {
      await bridge.stop();
    }
  } finally {
    await controlPlane.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runBridgePodsBench(Number(process.argv[2] ?? 20_000));
}
