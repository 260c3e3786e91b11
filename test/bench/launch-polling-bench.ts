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
import { AKS_COMMUNITY_GALLERIES, communityGalleryImageId } from '../../shared/decisions/node-image.js';
import { buildVirtualMachine, vmNameFor } from '../../shared/decisions/vm-spec.js';
import {
  launchMonitorOrchestrator,
  type LaunchMonitorInput,
  type PollVmCreationInput,
} from '../../shared/lifecycle/launch/launch-monitor.js';
import { LaunchMonitorNames } from '../../shared/runtime/function-names.js';
import { pollVmCreation } from '../../shared/lifecycle/launch/launch-outcome.js';
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
  makespanSeconds: number;
  operationGets: number;
  peakPerMinute: number;
  throttled: number;
}

async function measure(
  launches: number,
  createSeconds: number,
  retryAfterSeconds: number,
): Promise<PollingMeasurement> {
  const emulator = await startArmEmulator({
    latencies: { createMs: createSeconds * 1000, deleteMs: 100, retryAfterSeconds },
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
  const deps = { vms, log: silentLogger };
  const done = new Set<string>();
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
          done.add(
            (input as LaunchMonitorInput).vmName ?? (input as { monitor: LaunchMonitorInput }).monitor.vmName,
          );
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
    const names = Array.from({ length: launches }, (_, i) => `bench-${run}-${i}`);
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
          const input: LaunchMonitorInput = {
            nodeClaim: { name: nodeClaimName, uid: nodeClaimName, nodePool: 'bench' },
            vmName,
            offering,
            pollerState,
            startedAt: new Date().toISOString(),
            ...LAUNCH_POLL_DEFAULTS,
          };
          await host.orchestrations.startNew(LaunchMonitorNames.orchestration, {
            instanceId: `launch-${nodeClaimName}`,
            input,
          });
        }),
      );
    }
    while (done.size < launches) await new Promise((resolve) => setTimeout(resolve, 250));
    const makespanSeconds = (Date.now() - started) / 1000;
    const gets = emulator.controls.requests({ kind: 'getOperation' });
    return {
      launches,
      createSeconds,
      retryAfterSeconds,
      makespanSeconds,
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
  const cases: [number, number, number][] = [
    [250, 60, 10],
    [1_000, 60, 10],
  ];
  const rows: PollingMeasurement[] = [];
  for (const [launches, createSeconds, retryAfter] of cases) {
    log(
      `launch polling: ${launches} concurrent VM creations of ${createSeconds} s, Retry-After ${retryAfter} s`,
    );
    rows.push(await measure(launches, createSeconds, retryAfter));
  }
  const header = [
    'launches',
    'LRO s',
    'Retry-After s',
    'makespan s',
    'op GETs',
    'GETs/launch',
    'peak GETs/min',
    'limit/min',
    '% of limit',
    '429s',
  ];
  const lines = rows.map((r) => [
    String(r.launches),
    String(r.createSeconds),
    String(r.retryAfterSeconds),
    r.makespanSeconds.toFixed(1),
    String(r.operationGets),
    (r.operationGets / r.launches).toFixed(1),
    String(r.peakPerMinute),
    String(OPERATION_GET_LIMIT_PER_MINUTE),
    ((r.peakPerMinute / OPERATION_GET_LIMIT_PER_MINUTE) * 100).toFixed(0),
    String(r.throttled),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => (l[i] ?? '').length)));
  const format = (cells: string[]) => cells.map((c, i) => c.padStart(widths[i] ?? 0)).join('  ');
  process.stdout.write(
    "\nLaunch monitor polling load (operation-status GETs) beside Compute's per-subscription limit\n",
  );
  process.stdout.write(
    [format(header), format(widths.map((w) => '-'.repeat(w))), ...lines.map(format)].join('\n') + '\n',
  );
}
