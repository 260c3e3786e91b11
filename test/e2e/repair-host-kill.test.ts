// The repair workflow survives its host: the Function App, in a child process (test/support/host-process.ts)
// on a durable history directory, is killed with SIGKILL after the reboot of an unhealthy node (its
// NodeHealthy=False survives the reboot) and before the escalation, kept dead past twice the recovery
// bound, then started again: the escalation goes on from the history, without a second restart
// (REPAIR_MAX_REBOOTS is 1). Killed once more while the replacement's VM is being created: still exactly one replacement, and
// the unhealthy NodeClaim deleted once the replacement is Initialized. The ARM emulator and the kubelet
// simulator stay in this process, so the emulator's request log spans every host. Real control plane,
// Azurite, ARM emulator, event bridge and kubelet simulator; the app runs as its shipped identity.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, inject, test } from 'vitest';
import { exampleNodeClass, exampleNodePool, kubeApis } from '../../local/scenarios/scenario.js';
import { startLocalStack, type LocalStack } from '../../local/stack/local-stack.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import { DisruptionAnnotations } from '../../shared/decisions/disruption-state.js';
import { NODE_HEALTHY } from '../../shared/decisions/node-repair/policies.js';
import { parseProviderId, vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { replacementNameFor } from '../../shared/lifecycle/disruption/replacements.js';
import { RepairAnnotations } from '../../shared/lifecycle/disruption/repair/repair-activities.js';
import { WellKnown, type NodeClaim } from '../../shared/models/karpenter.js';
import { createLogger } from '../../shared/observability/logger.js';
import { devCa } from '../support/dev-ca.js';
import type { HostProcessConfig } from '../support/host-process.js';
import { shippedIdentities } from '../support/identities.js';
import { pollUntilDefined } from '../support/poll.js';
import { signalAndWait } from '../support/child-exit.js';
import { E2E_SPEED } from './e2e-stack.js';

const hostScript = fileURLToPath(new URL('../support/host-process.ts', import.meta.url));

let stack: LocalStack;
let stateDirectory: string;
let config: HostProcessConfig;
let host: ChildProcess | undefined;

beforeAll(async () => {
  stack = await startLocalStack({
    speed: E2E_SPEED,
    scoped: true,
    functionHost: false,
    shared: {
      kubeconfigPath: inject('kubeconfigPath'),
      identities: shippedIdentities(),
      storageConnectionString: inject('azuriteConnectionString'),
      ca: await devCa(),
    },
    log: createLogger({
      component: 'e2e',
      minLevel: process.env.TEST_LOGS ? 'debug' : 'warn',
      sink: (_level, line) => process.stderr.write(line + '\n'),
    }),
  });
  if (!stack.sweepScope) throw new Error('a scoped stack has a sweep scope');
  stateDirectory = await mkdtemp(join(tmpdir(), 'nodeclaim-repair-kill-'));
  config = {
    appSettings: stack.appSettings,
    stateDirectory,
    sweepSchedule: stack.timings.sweepSchedule,
    sweepScope: stack.sweepScope,
  };
}, 120_000);

afterAll(async () => {
  await stopHost();
  await stack?.stop();
  if (stateDirectory) await rm(stateDirectory, { recursive: true, force: true });
});

async function startHost(): Promise<void> {
  const child = spawn(process.execPath, ['--import', 'tsx', hostScript], {
    env: { ...process.env, HOST_PROCESS_CONFIG: JSON.stringify(config) },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  host = child;
  await new Promise<void>((resolve, reject) => {
    const failed = (code: number | null) =>
      reject(new Error(`host process exited with ${String(code)} before it was ready`));
    child.once('exit', failed);
    child.stdout?.on('data', (chunk: Buffer) => {
      if (chunk.toString().includes('ready')) {
        child.off('exit', failed);
        resolve();
      }
    });
  });
}

/** SIGKILL: no cleanup, no flush; the workflow stops wherever it is. */
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

const initialized = (c: NodeClaim | undefined) =>
  findCondition(c?.status?.conditions, 'Initialized')?.status === 'True';

test('killed between the reboot and the escalation, and again mid-replacement: one restart, one replacement, the unhealthy node deleted', async () => {
  const { runId } = stack;
  const name = `repkill-${runId}`;
  const objects = stack.admin.objects;
  const emulator = stack.emulator.controls;
  const pool = exampleNodePool(name, runId, name);
  pool.spec.replicas = 1;
  await objects.nodeClasses.create(exampleNodeClass(name, runId));
  await objects.nodePools.create(pool);
  const ofPool = async () => objects.nodeClaims.list({ labelSelector: `${WellKnown.nodePoolLabel}=${name}` });
  const { core } = kubeApis(stack.kubeconfigPath);
  const recoverySeconds = stack.timings.repair.rebootRecoverySeconds;
  try {
    await startHost();
    const original = await pollUntilDefined(
      'the node initialized',
      async () => (await ofPool()).find((c) => initialized(c) && c.status?.nodeName),
      120_000,
    );
    const oldName = original.metadata.name;
    const oldVm = parseProviderId(original.status?.providerID ?? '')?.vmName ?? '';
    const replacementName = replacementNameFor(name, original.metadata.uid ?? '', 0);
    const replacementVm = vmNameFor(replacementName);
    const restarts = () => emulator.requests({ kind: 'restartVm', vmName: oldVm });

    // A broken node that a reboot does not mend: the repair reboots it once, then must replace it.
    await stack.simulator.raiseCondition(
      original.status?.nodeName ?? '',
      { type: NODE_HEALTHY, status: 'False', reason: 'DiskReadOnly', message: 'the OS disk went read-only' },
      { survivesReboot: true },
    );
    const rebooted = await pollUntilDefined(
      'the reboot recorded on the NodeClaim',
      async () => {
        const current = await objects.nodeClaims.get(oldName);
        return current?.metadata.annotations?.[RepairAnnotations.reboots] === '1' ? current : undefined;
      },
      90_000,
    );
    await killHost();
    const killedAt = Date.now();
    // The kill landed between the reboot and the escalation: one restart sent, no replacement yet.
    expect(restarts().map((r) => [r.method, r.status])).toEqual([['POST', 202]]);
    expect(await objects.nodeClaims.get(replacementName)).toBeUndefined();
    const rebootedAt = Date.parse(rebooted.metadata.annotations?.[RepairAnnotations.lastRebootAt] ?? '');
    expect(Number.isFinite(rebootedAt)).toBe(true);

    // Dead past twice the recovery bound: the escalation is due when the host comes back, and the reboot
    // is older than the window in which an earlier repair's reboot counts (it must count all the same:
    // it is this repair's own). The replacement's VM is held in Creating so the second kill lands while
    // it launches.
    const deadUntil = rebootedAt + 2 * recoverySeconds * 1000 + 2_000;
    await new Promise((resolve) => setTimeout(resolve, Math.max(0, deadUntil - Date.now())));
    emulator.holdProvisioning(replacementVm);
    await startHost();
    console.log(`first kill: host dead ${((Date.now() - killedAt) / 1000).toFixed(1)} s`);
    await pollUntilDefined(
      'the replacement launching',
      async () => ((await objects.nodeClaims.get(replacementName))?.status?.providerID ? true : undefined),
      90_000,
    );
    expect(emulator.vms().find((vm) => vm.name === replacementVm)?.provisioningState).toBe('Creating');
    expect(await objects.nodeClaims.get(oldName)).toBeDefined();
    await killHost();
    emulator.releaseProvisioning(replacementVm);
    await startHost();

    // The old NodeClaim is deleted once the replacement is Initialized; the replacement was Initialized
    // when the old one's deletion began (read on every poll, so the order is seen, not inferred).
    let replacementReadyBeforeDelete: boolean | undefined;
    await pollUntilDefined(
      'the unhealthy NodeClaim deleted',
      async () => {
        const old = await objects.nodeClaims.get(oldName);
        if (old && !old.metadata.deletionTimestamp) return undefined;
        replacementReadyBeforeDelete ??= initialized(await objects.nodeClaims.get(replacementName));
        return old ? undefined : true;
      },
      180_000,
    );
    await pollUntilDefined(
      'the old VM gone',
      () => Promise.resolve(emulator.vms().some((vm) => vm.name === oldVm) ? undefined : true),
      60_000,
    );

    const claims = await ofPool();
    const replacements = claims.filter(
      (c) => c.metadata.annotations?.[DisruptionAnnotations.replacementOf] === oldName,
    );
    console.log(
      `restarts of ${oldVm}: ${restarts().length}; replacement PUTs: ${emulator
        .requests({ method: 'PUT', vmName: replacementVm })
        .map((r) => r.status)
        .join(', ')}`,
    );
    expect(restarts().map((r) => [r.method, r.status])).toEqual([['POST', 202]]);
    expect(replacements.map((c) => c.metadata.name)).toEqual([replacementName]);
    expect(claims.map((c) => c.metadata.name)).toEqual([replacementName]);
    expect(initialized(replacements[0])).toBe(true);
    expect(replacementReadyBeforeDelete).toBe(true);
    expect(
      emulator
        .requests({ method: 'PUT', vmName: replacementVm })
        .filter((r) => r.status >= 200 && r.status < 300),
    ).toHaveLength(1);

    // The repair workflow escalated (not a released mark retried by the executor) and says why.
    const events = (
      await core.listNamespacedEvent({
        namespace: 'default',
        fieldSelector: `involvedObject.name=${oldName}`,
      })
    ).items;
    const replacing = events.find((e) => e.reason === 'NodeRepairReplacing');
    expect(replacing?.message).toContain(`did not clear within ${recoverySeconds} s of reboot 1`);
    expect(replacing?.message).toContain(`replacement ${replacementName} is Initialized`);
    expect(events.filter((e) => e.reason === 'DisruptionReplacementFailed')).toEqual([]);
  } finally {
    await objects.nodePools.delete(name).catch(() => undefined);
    for (const claim of await ofPool())
      await objects.nodeClaims.delete(claim.metadata.name).catch(() => undefined);
    if (host) {
      await pollUntilDefined(
        'cleanup',
        async () => ((await ofPool()).length === 0 ? true : undefined),
        60_000,
      ).catch(() => undefined);
    }
    await stopHost();
    await objects.nodeClasses.delete(name).catch(() => undefined);
  }
}, 600_000);
