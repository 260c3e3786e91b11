// `npm run bench`: one lifecycle sweep over generated clusters of 100, 1,000 and 5,000 NodeClaims and
// Nodes (then, below, the drift makespan and launch polling benches), each with a handful of fresh (unregistered) pairs, against a real kube-apiserver started here
// (no scheduler or controller-manager: nothing but the sweep may change the objects). Prints time, API
// requests and memory per size, and the same per object so linear growth shows as flat columns.
import { fileURLToPath } from 'node:url';
import { CoreV1Api } from '@kubernetes/client-node';
import { startControlPlane } from '../../local/control-plane/launcher.js';
import {
  benchDependencies,
  CountingKubeConfig,
  createPairs,
  measureSweep,
  type SweepMeasurement,
} from './sweep-bench.js';

const sizes = [100, 1_000, 5_000];
const changesPerRound = 5;
const crdDirectory = fileURLToPath(new URL('../../infra/k8s/crds/', import.meta.url));

function table(rows: SweepMeasurement[]): string {
  const header = [
    'NodeClaims+Nodes',
    'changes',
    'sweep ms',
    'requests',
    'GET',
    'PATCH',
    'other',
    'heap MB',
    'ms/1k obj',
    'req/1k obj',
    'KB heap/obj',
    'writes/change',
  ];
  const lines = rows.map((r) => {
    const get = r.byMethod['GET'] ?? 0;
    const patch = r.byMethod['PATCH'] ?? 0;
    return [
      `${r.size}+${r.size}`,
      String(r.changes),
      r.ms.toFixed(0),
      String(r.requests),
      String(get),
      String(patch),
      String(r.requests - get - patch),
      r.heapGrowthMb.toFixed(1),
      ((r.ms / r.size) * 1000).toFixed(1),
      ((r.requests / r.size) * 1000).toFixed(1),
      ((r.heapGrowthMb * 1024) / r.size).toFixed(2),
      (patch / r.changes).toFixed(1),
    ];
  });
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  return [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join('\n');
}

async function main(): Promise<void> {
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const controlPlane = await startControlPlane({
    crdDirectories: [crdDirectory],
    scheduler: false,
    controllerManager: false,
    log,
  });
  try {
    const config = new CountingKubeConfig();
    config.loadFromFile(controlPlane.kubeconfigPath);
    const core = config.makeApiClient(CoreV1Api);
    const deps = benchDependencies(config);
    const rows: SweepMeasurement[] = [];
    // Warm-up on a few pairs, so JIT compilation is not charged to the first size.
    await createPairs(deps, core, 'warm', 0, changesPerRound, true);
    await measureSweep(deps, config, changesPerRound, changesPerRound);
    let existing = changesPerRound;
    for (const [round, size] of sizes.entries()) {
      const started = Date.now();
      // Earlier rounds' pairs are registered by now and count as settled ones.
      await createPairs(deps, core, 'settled', existing, size - changesPerRound, false);
      await createPairs(deps, core, `fresh${round}`, 0, changesPerRound, true);
      existing = size;
      log(`cluster of ${size} pairs ready in ${((Date.now() - started) / 1000).toFixed(1)} s`);
      const measured = await measureSweep(deps, config, size, changesPerRound);
      if (measured.result.status === 'skipped') throw new Error(measured.result.reason);
      const failed = measured.result.steps.reduce((n, s) => n + s.failed, 0);
      if (failed > 0) throw new Error(`${failed} objects failed in the sweep`);
      const acted = measured.result.steps.find((s) => s.step === 'registration')?.acted ?? 0;
      if (acted !== changesPerRound)
        throw new Error(`registered ${acted} pairs, expected ${changesPerRound}`);
      rows.push(measured);
      log(`swept ${size}: ${measured.ms.toFixed(0)} ms, ${measured.requests} requests`);
    }
    process.stdout.write(
      `\nOne lifecycle sweep (registration, initialization, liveness, termination, leftovers)\n`,
    );
    process.stdout.write(`${table(rows)}\n`);
    process.stdout.write(
      `\nEach size has ${changesPerRound} fresh Node/NodeClaim pairs to register and initialize; writes per change = 2 Node patches (registration, initialized label) + 2 status patches (Registered, Initialized).\n`,
    );
  } finally {
    await controlPlane.stop();
  }
}

await main();
await (await import('./drift-bench.js')).runDriftBench();
await (await import('./launch-polling-bench.js')).runLaunchPollingBench();
