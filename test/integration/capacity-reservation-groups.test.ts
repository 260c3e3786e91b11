// The ARM emulator's Capacity Reservation Groups through the real @azure/arm-compute client, as the app
// identity whose roles infra/azure-roles.json ships: a VM PUT that names a group is matched to the
// reservation of its size and zone and listed in the group's instance view, beyond the reserved count too
// (Azure overallocates rather than refuses); one whose size or zone the group holds no reservation for,
// or that names a group that does not exist, is refused; deleting the VM frees its slot; the group is read
// with the read actions, and the PUT needs the group's deploy action (a LinkedAuthorizationFailed without
// it). The app's own adapter reads what the client reads.
import { RestError } from '@azure/core-rest-pipeline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import { appAuthorization } from '../../local/stack/azure-role-assignments.js';
import { CapacityReservationGroups } from '../../shared/azure/capacity-reservations.js';
import { emulatorComputeClient, linuxVmParameters } from '../support/arm-client.js';

const subscriptionId = '00000000-0000-0000-0000-000000000001';
const nodeGroup = 'MC_reservations_nodes';
const reservationsGroup = 'reservations';
const location = 'westus2';
const groupId = `/subscriptions/${subscriptionId}/resourceGroups/${reservationsGroup}/providers/Microsoft.Compute/capacityReservationGroups/crg`;
/** Configured, so the app identity may deploy into it, but never created: ARM answers it is not found. */
const missingGroupId = groupId.replace(/crg$/, 'missing');
const appSettings = {
  // The reservation role is assigned on each configured group only (test/integration/arm-scopes.test.ts).
  CAPACITY_RESERVATION_GROUP_IDS: `${groupId},${missingGroupId}`,
  AZURE_SUBSCRIPTION_ID: subscriptionId,
  AZURE_NODE_RESOURCE_GROUP: nodeGroup,
  AZURE_SUBNET_ID: `/subscriptions/${subscriptionId}/resourceGroups/${nodeGroup}/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`,
};
let emulator: ArmEmulator;

beforeAll(async () => {
  emulator = await startArmEmulator({
    latencies: { createMs: 50, deleteMs: 50, retryAfterSeconds: 0.1 },
    authorization: appAuthorization(appSettings),
  });
  emulator.controls.defineCapacityReservationGroup({
    subscriptionId,
    resourceGroup: reservationsGroup,
    name: 'crg',
    location,
    reservations: [{ name: 'd4s-z1', vmSize: 'Standard_D4s_v5', zone: '1', capacity: 1 }],
  });
});

afterAll(async () => {
  await emulator?.stop();
});

function vm(name: string, zone: string, group = groupId) {
  return {
    ...linuxVmParameters({
      name,
      subscriptionId,
      resourceGroup: nodeGroup,
      location,
      zone,
      vmSize: 'Standard_D4s_v5',
      tags: {},
    }),
    capacityReservation: { capacityReservationGroup: { id: group } },
  };
}

async function refusal(promise: Promise<unknown>): Promise<{ code?: string; message: string }> {
  try {
    await promise;
  } catch (error) {
    if (error instanceof RestError)
      return { ...(error.code ? { code: error.code } : {}), message: error.message };
    throw error;
  }
  throw new Error('the request was not refused');
}

describe('capacity reservation groups in the ARM emulator', () => {
  const client = () => emulatorComputeClient(emulator, subscriptionId);
  const adapter = () =>
    new CapacityReservationGroups(
      client(),
      [{ id: groupId, subscriptionId, resourceGroup: reservationsGroup, name: 'crg' }],
      (_group, error) => {
        throw error;
      },
      Date.now,
      0,
    );

  it('a VM naming the group takes its slot; the next overallocates; deleting one frees its slot', async () => {
    await client().virtualMachines.beginCreateOrUpdateAndWait(nodeGroup, 'vm-one', vm('vm-one', '1'));
    expect(await adapter().records()).toEqual([
      {
        groupId,
        groupName: 'crg',
        name: 'd4s-z1',
        vmSize: 'Standard_D4s_v5',
        zoneNumber: '1',
        capacity: 1,
        allocatedVmNames: ['vm-one'],
        provisioningState: 'Succeeded',
      },
    ]);
    await client().virtualMachines.beginCreateOrUpdateAndWait(nodeGroup, 'vm-two', vm('vm-two', '1'));
    expect((await adapter().records())[0]?.allocatedVmNames).toEqual(['vm-one', 'vm-two']);
    const group = await client().capacityReservationGroups.get(reservationsGroup, 'crg');
    expect(group.virtualMachinesAssociated?.map((v) => v.id?.split('/').pop())).toEqual(['vm-one', 'vm-two']);
    await client().virtualMachines.beginDeleteAndWait(nodeGroup, 'vm-one');
    expect((await adapter().records())[0]?.allocatedVmNames).toEqual(['vm-two']);
    await client().virtualMachines.beginDeleteAndWait(nodeGroup, 'vm-two');
  });

  it('refuses a zone the group holds no reservation for, and a group that does not exist', async () => {
    expect(
      await refusal(client().virtualMachines.beginCreateOrUpdate(nodeGroup, 'vm-z2', vm('vm-z2', '2'))),
    ).toMatchObject({
      code: 'InvalidParameter',
      message: expect.stringContaining("no capacity reservation for VM size 'Standard_D4s_v5' in zone 2"),
    });
    expect(
      await refusal(
        client().virtualMachines.beginCreateOrUpdate(nodeGroup, 'vm-x', vm('vm-x', '1', missingGroupId)),
      ),
    ).toMatchObject({ code: 'ResourceNotFound' });
    expect(emulator.controls.vms().map((v) => v.name)).toEqual([]);
  });

  it('without the deploy action the PUT is refused as a linked access; without read the group is, and without the reservations read their listing is', async () => {
    emulator.controls.setAuthorization(
      appAuthorization(appSettings, {
        role: 'capacityReservationUser',
        action: 'Microsoft.Compute/capacityReservationGroups/deploy/action',
      }),
    );
    expect(
      await refusal(client().virtualMachines.beginCreateOrUpdate(nodeGroup, 'vm-3', vm('vm-3', '1'))),
    ).toMatchObject({
      code: 'LinkedAuthorizationFailed',
      message: expect.stringContaining(`'Microsoft.Compute/capacityReservationGroups/deploy/action'`),
    });
    emulator.controls.setAuthorization(
      appAuthorization(appSettings, {
        role: 'capacityReservationUser',
        action: 'Microsoft.Compute/capacityReservationGroups/read',
      }),
    );
    expect(await refusal(client().capacityReservationGroups.get(reservationsGroup, 'crg'))).toMatchObject({
      code: 'AuthorizationFailed',
    });
    emulator.controls.setAuthorization(
      appAuthorization(appSettings, {
        role: 'capacityReservationUser',
        action: 'Microsoft.Compute/capacityReservationGroups/capacityReservations/read',
      }),
    );
    const listing = (async () => {
      const listed = [];
      for await (const reservation of client().capacityReservations.listByCapacityReservationGroup(
        reservationsGroup,
        'crg',
      ))
        listed.push(reservation);
      return listed;
    })();
    // The SDK's pager keeps ARM's code but not its message ("Pagination failed with … 403").
    expect(await refusal(listing)).toMatchObject({ code: 'AuthorizationFailed' });
    emulator.controls.setAuthorization(appAuthorization(appSettings));
  });
});
