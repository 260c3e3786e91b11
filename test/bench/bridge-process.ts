// The event bridge alone in its own process, for the memory bench: the bench's process creates 20,000 pods
// and its garbage would swamp the bridge's own figure. Started by bridge-pods-bench.ts with
// `<kubeconfig> <pods> bridge|baseline`; prints one JSON line (MemorySample) once the Pod informer holds
// every pod and a forced full collection ran, then exits. `baseline` loads the same modules and client
// but starts no bridge, so the difference between the two is what the bridge holds.
import { setTimeout as sleep } from 'node:timers/promises';
import { KubeConfig } from '@kubernetes/client-node';
import { startBridge } from '../../bridge/bridge.js';
import { silentLogger } from '../../shared/observability/logger.js';

export interface MemorySample {
  heapUsedBytes: number;
  rssBytes: number;
  /** Start to the Pod informer synced with every pod; 0 for the baseline. */
  syncMs: number;
}

function settledMemory(): { heapUsedBytes: number; rssBytes: number } {
  const gc = (globalThis as { gc?: () => void }).gc;
  if (!gc) throw new Error('bridge-process needs --expose-gc (npm run bench sets NODE_OPTIONS)');
  gc();
  gc();
  const usage = process.memoryUsage();
  return { heapUsedBytes: usage.heapUsed, rssBytes: usage.rss };
}

async function main(kubeconfigPath: string, pods: number, mode: string): Promise<MemorySample> {
  const kubeConfig = new KubeConfig();
  kubeConfig.loadFromFile(kubeconfigPath);
  if (mode === 'baseline') {
    await sleep(500);
    return { ...settledMemory(), syncMs: 0 };
  }
  if (mode !== 'bridge') throw new Error(`mode must be bridge or baseline, got ${mode}`);
  const started = Date.now();
  const bridge = await startBridge({
    queue: { mode: 'connectionString', connectionString: 'UseDevelopmentStorage=true', queueName: 'unused' },
    kubernetes: { mode: 'kubeConfig', kubeConfig },
    source: '/bench/event-bridge',
    logger: silentLogger,
    queueSink: { send: () => Promise.resolve(), probe: () => Promise.resolve() },
  });
  try {
    while (!bridge.stats().informers.Pod.synced || bridge.stats().informers.Pod.cached < pods)
      await sleep(50);
    const syncMs = Date.now() - started;
    // Let the list's transient buffers go before measuring what the informer keeps.
    await sleep(1_000);
    return { ...settledMemory(), syncMs };
  } finally {
    await bridge.stop();
  }
}

const [kubeconfigPath, pods, mode] = process.argv.slice(2);
if (!kubeconfigPath || !pods || !mode)
  throw new Error('usage: bridge-process.ts <kubeconfig> <pods> bridge|baseline');
process.stdout.write(JSON.stringify(await main(kubeconfigPath, Number(pods), mode)) + '\n');
process.exit(0);
