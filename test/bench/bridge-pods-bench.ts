// The event bridge's memory with 20,000 pending pods, against a real kube-apiserver (no scheduler: the
// pods stay unbound, which is what the bridge's pod watch selects with `spec.nodeName=`). The pods are
// realistic Deployment pods (labels, owner reference, two containers with env, ports, probes and
// resources), so the figure reflects the slim projection the informer caches, not toy objects.
//
// Measured in a process of its own (bridge-process.ts), since this one's garbage from creating the pods
// would swamp the figure: the bridge process's heap and RSS once synced (after a forced full collection),
// beside the same process without the bridge, so the difference is what the bridge holds per pod; how long
// the initial paginated list took; and the JSON size of the same pods as the API server sends them.
// Run alone with `npx tsx test/bench/bridge-pods-bench.ts [pods]`; `npm run bench` runs it with 20,000.
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { fileURLToPath } from 'node:url';
import { CoreV1Api, KubeConfig, type V1Pod } from '@kubernetes/client-node';
import { startControlPlane } from '../../local/control-plane/launcher.js';
import type { MemorySample } from './bridge-process.js';

/** Leaves room for the runtime (≈60 MB) within the bridge Deployment's 384Mi memory limit. */
const GOAL_MB = 300;
/** The bridge Deployment's memory limit (infra/k8s/bridge/deployment.yaml): RSS above it is an OOM kill. */
const LIMIT_MIB = 384;

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

/** Runs bridge-process.ts in a child process and returns its one MemorySample line. */
async function sampleBridgeProcess(
  kubeconfigPath: string,
  pods: number,
  mode: 'bridge' | 'baseline',
): Promise<MemorySample> {
  const script = fileURLToPath(new URL('./bridge-process.ts', import.meta.url));
  const child = spawn(
    process.execPath,
    ['--expose-gc', '--import', import.meta.resolve('tsx'), script, kubeconfigPath, String(pods), mode],
    { stdio: ['ignore', 'pipe', 'inherit'] },
  );
  let stdout = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => (stdout += chunk));
  const [code] = (await once(child, 'exit')) as [number | null];
  if (code !== 0) throw new Error(`bridge-process ${mode} exited with ${code}: ${stdout}`);
  return JSON.parse(stdout.trim().split('\n').at(-1)!) as MemorySample;
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

    const baseline = await sampleBridgeProcess(controlPlane.kubeconfigPath, pods, 'baseline');
    const withBridge = await sampleBridgeProcess(controlPlane.kubeconfigPath, pods, 'bridge');
    const mb = (bytes: number) => bytes / 2 ** 20;
    const heapMb = mb(withBridge.heapUsedBytes - baseline.heapUsedBytes);
    const perPodBytes = ((withBridge.heapUsedBytes - baseline.heapUsedBytes) / pods).toFixed(0);
    process.stdout.write(
      `\nEvent bridge with ${pods.toLocaleString('en-US')} pending pods (watch spec.nodeName=, slim projection), in its own process\n` +
        `  initial list + sync: ${(withBridge.syncMs / 1000).toFixed(1)} s; after a full collection: heap ${mb(withBridge.heapUsedBytes).toFixed(1)} MB, ` +
        `RSS ${mb(withBridge.rssBytes).toFixed(0)} MB (same process without the bridge: heap ${mb(baseline.heapUsedBytes).toFixed(1)} MB, ` +
        `RSS ${mb(baseline.rssBytes).toFixed(0)} MB)\n` +
        `  the bridge's own heap: ${heapMb.toFixed(1)} MB (≈${perPodBytes} B per pod) against ≈${(jsonBytesPerPod / 1024).toFixed(1)} KB ` +
        `of JSON per pod from the API server\n` +
        `  goal: bridge process heap ≤ ${GOAL_MB} MB at ${pods.toLocaleString('en-US')} pods (within the Deployment's 384Mi limit) → ` +
        `${mb(withBridge.heapUsedBytes) <= GOAL_MB ? 'met' : 'MISSED'}; ` +
        `RSS ${mb(withBridge.rssBytes).toFixed(0)} MB against the limit of ${LIMIT_MIB} MiB → ` +
        `${mb(withBridge.rssBytes) <= LIMIT_MIB ? 'within' : 'OVER'} (this process runs under tsx; the image runs compiled JavaScript)\n`,
    );
  } finally {
    await controlPlane.stop();
  }
}

if (import.meta.url === `file://${process.argv[1]}`) {
  await runBridgePodsBench(Number(process.argv[2] ?? 20_000));
}
