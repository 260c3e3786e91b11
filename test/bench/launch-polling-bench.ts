// Polling load of many concurrent launches: N VM creations are PUT to the ARM emulator (real Compute
// throttling policies at scale 1), then N real launch monitor orchestrations poll them through the real
// pollVmCreation activity and @azure/arm-compute pollers, driven by durable-functions' replay engine in
// the in-process host. The emulator's request log gives the operation-status GETs per minute, printed
// beside Compute's per-subscription limit (5,000/min), which is the baseline the design must stay inside.
// Only the two "record outcome" activities are replaced (they would write NodeClaims, which is not what is
// measured here).
import { randomUUID } from 'node:crypto';
import { startArmEmulator } from '../../local/arm-emulator/index.js';
import { LAUNCH_POLL_DEFAULTS } from '../../shared/config/settings.js';
import { createLocalHost } from '../../local/host/index.js';
import { createComputeClient } from '../../shared/azure/compute-client.js';
import { VirtualMachines } from '../../shared/azure/virtual-machines.js';
import { offeringsFromSkus } from '../../shared/decisions/offerings.js';
import {
  AKS_COMMUNITY_GALLERIES,
  communityGalleryImageId,
} from '../../shared/cloudprovider/azure/decisions/node-image.js';
import { buildVirtualMachine, vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import {
  launchMonitorOrchestrator,
  type LaunchMonitorInput,
  type PollVmCreationInput,
} from '../../shared/lifecycle/launch/launch-monitor.js';
import { LaunchMonitorNames } from '../../shared/runtime/function-names.js';
import { pollVmCreation } from '../../shared/lifecycle/launch/launch-outcome.js';
import { pollLaunch } from '../../shared/cloudprovider/azure.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { FunctionDefinition } from '../../shared/runtime/definitions.js';

const OPERATION_GET_LIMIT_PER_MINUTE = 5_000;
const subscriptionId = '00000000-0000-0000-0000-0000000000b1';
const resourceGroup = 'bench-nodes';
const location = 'westus2';

interface PollingMeasurement {
  launches: number;
  createSeconds: number;
  retryAfterSeconds: number;
  /** Launches whose LRO fails after `failSeconds`; the others succeed after `createSeconds`. */
  probes: number;
  failSeconds: number;
  /** From the emulator marking a probe's VM Failed to the monitor recording the failure, per probe. */
  detectionSeconds: number[];
  durationSeconds: number;
  operationGets: number;
  peakPerMinute: number;
  throttled: number;
}

/**
 * N concurrent launches through real launch monitors: `probes` of them fail with AllocationFailed after
 * `failSeconds`, the rest succeed after `createSeconds`. Ends when every probe's failure is recorded
 * (and, with `untilAllDone`, every launch's outcome). The in-flight count the monitors pace by is the
 * launches without a recorded outcome: the bench has no NodeClaims, whose Launched=Unknown count is
 * what the Function App reports (ClusterReader.launchesInFlight).
 */
async function measure(options: {
  launches: number;
  createSeconds: number;
  retryAfterSeconds: number;
  probes: number;
  failSeconds: number;
  untilAllDone: boolean;
}): Promise<PollingMeasurement> {
  const { launches, createSeconds, retryAfterSeconds, probes, failSeconds } = options;
  const emulator = await startArmEmulator({
    latencies: {
      createMs: createSeconds * 1000,
      deleteMs: 100,
      retryAfterSeconds,
      overrides: [{ vmName: '*-probe-*', createMs: failSeconds * 1000 }],
    },
  });
  emulator.controls.injectFault({ match: { vmName: '*-probe-*' }, effect: { type: 'AllocationFailed' } });
  const failedAt = new Map<string, number>();
  const detectedAt = new Map<string, number>();
  emulator.controls.onVmChange((change) => {
    if (change.type === 'failed') failedAt.set(change.vm.name, Date.now());
  });
  const credential = {
    getToken: () => Promise.resolve({ token: 'bench', expiresOnTimestamp: Date.now() + 3_600_000 }),
  };
  const compute = createComputeClient({
    credential,
    subscriptionId,
    endpoint: emulator.url,
    caCertPem: emulator.caCertPem,
  });
  const vms = new VirtualMachines(compute, resourceGroup);
  const done = new Set<string>();
  const deps = {
    cloud: {
      pollLaunch: (vmName: string, state?: string) => pollLaunch({ vms, log: silentLogger }, vmName, state),
    },
    log: silentLogger,
    cluster: { launchesInFlight: () => Promise.resolve(launches - done.size) },
  };
  const definitions: FunctionDefinition[] = [
    { kind: 'orchestration', name: LaunchMonitorNames.orchestration, handler: launchMonitorOrchestrator },
    {
      kind: 'activity',
      name: LaunchMonitorNames.pollVmCreation,
      handler: (input) => pollVmCreation(deps, input as PollVmCreationInput),
    },
    ...[LaunchMonitorNames.recordLaunchSuccess, LaunchMonitorNames.recordLaunchFailure].map(
      (name): FunctionDefinition => ({
        kind: 'activity',
        name,
        handler: (input) => {
          const vmName =
            (input as LaunchMonitorInput).vmName ?? (input as { monitor: LaunchMonitorInput }).monitor.vmName;
          done.add(vmName);
          if (name === LaunchMonitorNames.recordLaunchFailure) detectedAt.set(vmName, Date.now());
          return Promise.resolve(null);
        },
      }),
    ),
  ];
  const host = createLocalHost({
    definitions,
    storageConnectionString: 'UseDevelopmentStorage=true',
    log: silentLogger,
    maxConcurrentActivities: 100,
  });
  await host.start();
  try {
    const offering = offeringsFromSkus(await listSkus(compute), location).find(
      (o) => o.capacityType === 'on-demand',
    );
    if (!offering) throw new Error('no offering in the emulator catalog');
    const started = Date.now();
    const run = randomUUID().slice(0, 6);
    const names = Array.from({ length: launches }, (_, i) =>
      i < probes ? `bench-${run}-probe-${i}` : `bench-${run}-${i}`,
    );
    const probeVms = names.slice(0, probes).map(vmNameFor);
    let startedCount = 0;
    for (let i = 0; i < names.length; i += 50) {
      await Promise.all(
        names.slice(i, i + 50).map(async (nodeClaimName) => {
          const vmName = vmNameFor(nodeClaimName);
          const body = buildVirtualMachine({
            location,
            clusterName: 'bench',
            nodePoolName: 'bench',
            nodeClaimName,
            offering,
            subnetId: `/subscriptions/${subscriptionId}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/v/subnets/s`,
            customData: Buffer.from('#cloud-config\n').toString('base64'),
            sshPublicKey: 'ssh-ed25519 AAAABench bench',
            adminUsername: 'azureuser',
            imageId: communityGalleryImageId(
              AKS_COMMUNITY_GALLERIES.ubuntu,
              '2404gen2containerd',
              '202608.20.0',
            ),
            kubeletIdentityResourceId: `/subscriptions/${subscriptionId}/resourceGroups/bench/providers/Microsoft.ManagedIdentity/userAssignedIdentities/kubelet`,
            loadBalancerBackendPoolIds: [],
            ipConfigurationCount: 1,
          });
          const put = await vms.beginCreate(vmName, body);
          if (!put.created) throw new Error(`VM ${vmName} already exists`);
          const { pollerState } = put;
          startedCount += 1;
          const input: LaunchMonitorInput = {
            nodeClaim: { name: nodeClaimName, uid: nodeClaimName, nodePool: 'bench' },
            vmName,
            offering,
            pollerState,
            startedAt: new Date().toISOString(),
            ...LAUNCH_POLL_DEFAULTS,
            // What startLaunchMonitor reads from the cluster: the launches started so far.
            inFlightLaunches: startedCount - done.size,
          };
          await host.orchestrations.startNew(LaunchMonitorNames.orchestration, {
            instanceId: `launch-${nodeClaimName}`,
            input,
          });
        }),
      );
    }
    const finished = () =>
      options.untilAllDone ? done.size >= launches : probeVms.every((vm) => detectedAt.has(vm));
    while (!finished()) await new Promise((resolve) => setTimeout(resolve, 250));
    const durationSeconds = (Date.now() - started) / 1000;
    const gets = emulator.controls.requests({ kind: 'getOperation' });
    return {
      launches,
      createSeconds,
      retryAfterSeconds,
      probes,
      failSeconds,
      detectionSeconds: probeVms.map(
        (vm) => ((detectedAt.get(vm) ?? NaN) - (failedAt.get(vm) ?? NaN)) / 1000,
      ),
      durationSeconds,
      operationGets: gets.length,
      peakPerMinute: peakInWindow(
        gets.map((r) => Date.parse(r.time)),
        60_000,
      ),
      throttled: emulator.controls.requests().filter((r) => r.throttled).length,
    };
  } finally {
    await host.stop();
    await emulator.stop();
  }
}

/**
 * When the monitor as it was before pacing (first poll after 10 s, each interval 1.5× the last up to
 * 60 s, no spread) sees a failure Azure reports `failSeconds` after the PUT, with one launch in flight.
 */
function previousDetectionSeconds(failSeconds: number): number {
  let at = 0;
  let interval = 10;
  while (at < failSeconds) {
    at += interval;
    interval = Math.min(interval * 1.5, 60);
  }
  return at - failSeconds;
}

async function listSkus(compute: ReturnType<typeof createComputeClient>) {
  const skus = [];
  for await (const sku of compute.resourceSkus.list({ filter: `location eq '${location}'` })) skus.push(sku);
  return skus;
}

/** Most events inside any window of `windowMs` (a sliding window over sorted timestamps). */
function peakInWindow(times: number[], windowMs: number): number {
  const sorted = [...times].sort((a, b) => a - b);
  let peak = 0;
  let start = 0;
  for (let end = 0; end < sorted.length; end++) {
    while ((sorted[end] ?? 0) - (sorted[start] ?? 0) >= windowMs) start++;
    peak = Math.max(peak, end - start + 1);
  }
  return peak;
}

export async function runLaunchPollingBench(): Promise<void> {
  const log = (line: string) => process.stderr.write(`[bench] ${line}\n`);
  const failSeconds = 50;
  const retryAfter = 10;
  const cases = (process.env['POLLING_BENCH_CASES'] ?? '1,100,1000').split(',').map(Number);
  const rows: PollingMeasurement[] = [];
  for (const launches of cases) {
    log(
      `launch polling: ${launches} in flight, failures reported by ARM after ${failSeconds} s, Retry-After ${retryAfter} s`,
    );
    rows.push(
      await measure({
        launches,
        createSeconds: 120,
        retryAfterSeconds: retryAfter,
        probes: Math.min(launches, 10),
        failSeconds,
        untilAllDone: false,
      }),
    );
  }
  const goalSeconds = Math.max(retryAfter, 5);
  const header = [
    'in flight',
    'fails after s',
    'Retry-After s',
    'detected after s (max)',
    'goal s',
    'op GETs',
    'peak GETs/min',
    '% of 5,000/min',
    '429s',
  ];
  const lines = rows.map((r) => [
    String(r.launches),
    String(r.failSeconds),
    String(r.retryAfterSeconds),
    Math.max(...r.detectionSeconds).toFixed(1),
    r.launches >= 1_000 ? '-' : `≤ ${goalSeconds}`,
    String(r.operationGets),
    String(r.peakPerMinute),
    ((r.peakPerMinute / OPERATION_GET_LIMIT_PER_MINUTE) * 100).toFixed(0),
    String(r.throttled),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  process.stdout.write(
    "\nLaunch failure detection and polling load (operation-status GETs) beside Compute's per-subscription limit\n",
  );
  process.stdout.write(
    [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join('\n') + '\n',
  );
  const verdicts = rows.map((r) => {
    const worst = Math.max(...r.detectionSeconds);
    if (r.launches >= 1_000) {
      const share = r.peakPerMinute / OPERATION_GET_LIMIT_PER_MINUTE;
      const ok = r.throttled === 0 && share < 0.8;
      return `${r.launches} in flight: zero 429s and peak < 80% of the limit → ${r.throttled} 429s, ${(share * 100).toFixed(0)}% (${ok ? 'met' : 'MISSED'})`;
    }
    return `${r.launches} in flight: detection ≤ ${goalSeconds} s → ${worst.toFixed(1)} s (${worst <= goalSeconds ? 'met' : 'MISSED'})`;
  });
  process.stdout.write(
    `${verdicts.join('\n')}\nBefore pacing (first poll after 10 s, ×1.5 growth), one launch in flight saw a failure reported at ${failSeconds} s ${previousDetectionSeconds(failSeconds).toFixed(1)} s late.\n`,
  );
}
