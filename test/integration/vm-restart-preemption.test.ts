// A VM restart through the real @azure/arm-compute client and the app's Azure layer (begin, then poll
// the serialized poller as the repair workflow does), authorized as the app identity's shipped roles
// (and refused without Microsoft.Compute/virtualMachines/restart/action); and the emulator's spot
// preemption: the notice first, then the eviction per the VM's evictionPolicy. Real ARM emulator.
import { afterAll, beforeAll, expect, test } from 'vitest';
import { startArmEmulator, type ArmEmulator, type VmChangeEvent } from '../../local/arm-emulator/index.js';
import { appAuthorization } from '../../local/stack/azure-role-assignments.js';
import { VirtualMachines } from '../../shared/azure/virtual-machines.js';
import { emulatorComputeClient, linuxVmParameters } from '../support/arm-client.js';
import { pollUntilDefined } from '../support/poll.js';

const subscriptionId = '00000000-0000-0000-0000-0000000000aa';
const resourceGroup = 'MC_restart_nodes';
const appSettings = {
  AZURE_SUBSCRIPTION_ID: subscriptionId,
  AZURE_NODE_RESOURCE_GROUP: resourceGroup,
  AZURE_SUBNET_ID: `/subscriptions/${subscriptionId}/resourceGroups/${resourceGroup}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
};

let emulator: ArmEmulator;
let vms: VirtualMachines;
const changes: VmChangeEvent[] = [];

beforeAll(async () => {
  emulator = await startArmEmulator({
    latencies: { createMs: 200, deleteMs: 200, restartMs: 600, retryAfterSeconds: 0 },
    authorization: appAuthorization(appSettings, undefined),
  });
  emulator.controls.onVmChange((change) => changes.push(change));
  vms = new VirtualMachines(emulatorComputeClient(emulator, subscriptionId), resourceGroup);
});

afterAll(async () => {
  await emulator.stop();
});

async function createVm(name: string, spot: boolean): Promise<void> {
  const body = linuxVmParameters({
    name,
    subscriptionId,
    resourceGroup,
    location: 'westus2',
    zone: '1',
    vmSize: 'Standard_D2s_v5',
    tags: {},
  });
  if (spot)
    Object.assign(body, { priority: 'Spot', evictionPolicy: 'Delete', billingProfile: { maxPrice: -1 } });
  const started = await vms.beginCreate(name, body);
  expect(started.created).toBe(true);
  await pollUntilDefined(`VM ${name} Succeeded`, async () =>
    (await vms.get(name))?.provisioningState === 'Succeeded' ? true : undefined,
  );
}

async function pollUntilDone(
  pollerState: string,
): Promise<Awaited<ReturnType<VirtualMachines['pollRestart']>>> {
  let state = pollerState;
  for (;;) {
    const result = await vms.pollRestart(state);
    if (result.status !== 'InProgress') return result;
    state = result.pollerState;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

test('a restart is an LRO: accepted, InProgress while the guest reboots, then Succeeded', async () => {
  await createVm('restart-1', false);
  const begun = await vms.beginRestart('restart-1');
  if (begun === 'gone') throw new Error('the VM should exist');
  expect(changes.filter((c) => c.vm.name === 'restart-1').map((c) => c.type)).toContain('restarting');
  const first = await vms.pollRestart(begun.pollerState);
  expect(first.status).toBe('InProgress');
  const done = await pollUntilDone(begun.pollerState);
  expect(done).toEqual({ status: 'Succeeded' });
  expect(changes.filter((c) => c.vm.name === 'restart-1').map((c) => c.type)).toEqual([
    'creating',
    'succeeded',
    'restarting',
    'restarted',
  ]);
  const restarts = emulator.controls.requests({ kind: 'restartVm', vmName: 'restart-1' });
  expect(restarts.map((r) => [r.method, r.status])).toEqual([['POST', 202]]);
});

test('restarting a VM that does not exist answers gone', async () => {
  expect(await vms.beginRestart('no-such-vm')).toBe('gone');
});

test('without virtualMachines/restart/action the restart is refused AuthorizationFailed, naming it', async () => {
  await createVm('restart-2', false);
  emulator.controls.setAuthorization(
    appAuthorization(appSettings, {
      role: 'vmOperator',
      action: 'Microsoft.Compute/virtualMachines/restart/action',
    }),
  );
  try {
    await expect(vms.beginRestart('restart-2')).rejects.toMatchObject({
      statusCode: 403,
      code: 'AuthorizationFailed',
      message: expect.stringContaining('Microsoft.Compute/virtualMachines/restart/action') as unknown,
    });
  } finally {
    emulator.controls.setAuthorization(appAuthorization(appSettings, undefined));
  }
});

test('a spot VM is preempted: the notice, then after it the VM is deleted (evictionPolicy Delete)', async () => {
  await createVm('spot-1', true);
  const notice = emulator.controls.preemptVm('spot-1', { noticeMs: 800 });
  expect(notice.evictionPolicy).toBe('Delete');
  const announced = changes.find((c) => c.vm.name === 'spot-1' && c.type === 'preemption-scheduled');
  expect(announced?.vm.preemptionNotBefore).toBe(notice.notBefore);
  expect(await vms.get('spot-1')).toBeDefined();
  await pollUntilDefined('spot-1 evicted', async () =>
    (await vms.get('spot-1')) === undefined ? true : undefined,
  );
  const types = changes.filter((c) => c.vm.name === 'spot-1').map((c) => c.type);
  expect(types.slice(2)).toEqual(['preemption-scheduled', 'evicted', 'deleting', 'deleted']);
  expect(Date.now()).toBeGreaterThanOrEqual(Date.parse(notice.notBefore));
});

test('a regular VM is not preempted', async () => {
  await createVm('regular-1', false);
  expect(() => emulator.controls.preemptVm('regular-1')).toThrow(/only Spot and Low priority/);
});
