// Every Azure grant of the app identity is needed and no wider than its use, at the emulator's speed so
// it runs in CI: the ARM emulator enforces the assignments infra/azure-roles.json ships (resolved from
// the local stack's own settings by local/stack/azure-role-assignments.ts), and the real
// @azure/arm-compute client sends the VM body the app builds (buildVirtualMachine). Two halves:
//   needed: without any one action of any custom role, the request that uses it is refused naming it;
//   narrow: the same identity is refused just outside each scope: another user-assigned identity of the
//   node resource group (an add-on's), another backend pool of the same load balancer, another NSG and
//   another subnet beside the node ones, a reservation group not configured (and any group when none
//   is), a VM in another resource group, the catalogs, quota usages and placement scores of another
//   subscription.
// The slow half of the mutation table (a whole launch and deletion per action, through the Function
// App) stays opt-in: test/e2e/azure-role-mutations.test.ts.
import { randomUUID } from 'node:crypto';
import type { ComputeManagementClient, VirtualMachine } from '@azure/arm-compute';
import { createDefaultHttpClient, createPipelineRequest, RestError } from '@azure/core-rest-pipeline';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startArmEmulator, type ArmEmulator } from '../../local/arm-emulator/index.js';
import { localClusterSettings } from '../../local/stack/app-settings.js';
import {
  appAuthorization,
  assignmentScopes,
  customRoles,
  type AzureRoleMutation,
} from '../../local/stack/azure-role-assignments.js';
import type { Offering } from '../../shared/decisions/offerings.js';
import { buildVirtualMachine, vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { emulatorComputeClient } from '../support/arm-client.js';
import { d2sV5Offering } from '../support/offering.js';

const subscriptionId = '00000000-0000-0000-0000-000000000001';
const nodeGroup = 'MC_scopes_nodes';
const otherGroup = 'MC_someone_else';
const reservationsGroup = 'reservations';
const location = 'westus2';
const providers = `/subscriptions/${subscriptionId}/resourceGroups/${nodeGroup}/providers`;
const subnetId = `/subscriptions/${subscriptionId}/resourceGroups/net/providers/Microsoft.Network/virtualNetworks/vnet/subnets/nodes`;
const groupId = `/subscriptions/${subscriptionId}/resourceGroups/${reservationsGroup}/providers/Microsoft.Compute/capacityReservationGroups/crg`;
const unconfiguredGroupId = groupId.replace(/crg$/, 'other-crg');
const imageId =
  '/CommunityGalleries/AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2/images/2404gen2containerd/versions/202608.20.0';

/** The local stack's cluster on a VNet of its own (the NIC carries the node NSG), with one group. */
const appSettings: Record<string, string> = {
  ...localClusterSettings(subscriptionId, nodeGroup),
  AZURE_SUBSCRIPTION_ID: subscriptionId,
  AZURE_NODE_RESOURCE_GROUP: nodeGroup,
  VNET_SUBNET_ID: subnetId,
  ATTACH_NSG_TO_NIC: 'true',
  CAPACITY_RESERVATION_GROUP_IDS: groupId,
};
const kubeletIdentity = appSettings.KUBELET_IDENTITY_RESOURCE_ID as string;
const outboundPool = appSettings.LOAD_BALANCER_BACKEND_POOL_IDS as string;
const nodeNsg = appSettings.NODE_SECURITY_GROUP_ID as string;

interface Body {
  name: string;
  offering?: Offering;
  kubeletIdentity?: string;
  pools?: string[];
  nsg?: string;
  subnet?: string;
}

/** The VM PUT body the app builds for a NodeClaim, with the linked resources a case swaps. */
function vmBody(body: Body): VirtualMachine {
  return buildVirtualMachine({
    location,
    clusterName: 'scopes',
    nodePoolName: 'default',
    nodeClaimName: body.name,
    offering: body.offering ?? d2sV5Offering(),
    imageId,
    subnetId: body.subnet ?? subnetId,
    customData: Buffer.from('#cloud-config\n').toString('base64'),
    sshPublicKey: 'ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAITestKeyForTheEmulatorOnly scopes',
    adminUsername: 'azureuser',
    kubeletIdentityResourceId: body.kubeletIdentity ?? kubeletIdentity,
    loadBalancerBackendPoolIds: body.pools ?? [outboundPool],
    networkSecurityGroupId: body.nsg ?? nodeNsg,
    ipConfigurationCount: 1,
  });
}

const reserved = (id: string): Offering =>
  d2sV5Offering({ capacityType: 'reserved', reservationGroupId: id });

let emulator: ArmEmulator;
let client: ComputeManagementClient;

beforeAll(async () => {
  emulator = await startArmEmulator({
    latencies: { createMs: 30, deleteMs: 30, retryAfterSeconds: 0.05 },
    authorization: appAuthorization(appSettings, undefined),
  });
  for (const name of ['crg', 'other-crg'])
    emulator.controls.defineCapacityReservationGroup({
      subscriptionId,
      resourceGroup: reservationsGroup,
      name,
      location,
      reservations: [{ name: 'd2s-z1', vmSize: 'Standard_D2s_v5', zone: '1', capacity: 4 }],
    });
  client = emulatorComputeClient(emulator, subscriptionId);
});

afterAll(async () => {
  await emulator?.stop();
});

/** Runs `run` with the shipped assignments as `settings` resolve them, less `without`; then restores. */
async function as<T>(
  run: () => Promise<T>,
  options: { without?: AzureRoleMutation; settings?: Record<string, string> } = {},
): Promise<T> {
  emulator.controls.setAuthorization(appAuthorization(options.settings ?? appSettings, options.without));
  try {
    return await run();
  } finally {
    emulator.controls.setAuthorization(appAuthorization(appSettings, undefined));
  }
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

/**
 * The region's spot placement scores as the app asks for them (shared/azure/placement-scores.ts): a POST
 * through the compute client's pipeline, which answers rather than throws, so a refusal is thrown here as
 * the SDK's own operations would.
 */
async function placementScores(compute: ComputeManagementClient, subscription: string): Promise<void> {
  return sendThroughPipeline(
    compute,
    'POST',
    `/subscriptions/${subscription}/providers/Microsoft.Compute/locations/${location}` +
      '/placementScores/spot/generate?api-version=2025-06-05',
    {
      desiredLocations: [location],
      desiredSizes: [{ sku: 'Standard_D2s_v5' }],
      desiredCount: 1,
      availabilityZones: true,
    },
  );
}

/** The status of a VM creation operation, as the launch monitor's poller GETs it. */
async function operationStatus(compute: ComputeManagementClient, subscription: string): Promise<void> {
  return sendThroughPipeline(
    compute,
    'GET',
    `/subscriptions/${subscription}/providers/Microsoft.Compute/locations/${location}` +
      `/operations/${randomUUID()}?api-version=2024-07-01`,
  );
}

/** A request through the compute client's own pipeline (its token and TLS), ARM's refusal as a RestError. */
async function sendThroughPipeline(
  compute: ComputeManagementClient,
  method: 'GET' | 'POST',
  path: string,
  body?: object,
): Promise<void> {
  const request = createPipelineRequest({
    url: `${emulator.url}${path}`,
    method,
    ...(body ? { body: JSON.stringify(body) } : {}),
  });
  if (body) request.headers.set('content-type', 'application/json');
  const response = await compute.pipeline.sendRequest(createDefaultHttpClient(), request);
  if (response.status === 200) return;
  const { error } = JSON.parse(response.bodyAsText ?? '{}') as {
    error?: { code?: string; message?: string };
  };
  throw new RestError(error?.message ?? `${method} ${path} answered ${response.status}`, {
    statusCode: response.status,
    ...(error?.code ? { code: error.code } : {}),
  });
}

/** The first page of a pager is enough to be refused or not. */
async function listed(pages: AsyncIterable<unknown>): Promise<void> {
  for await (const _item of pages) break;
}

/** Polls as often as the emulator's short latencies allow (the SDK's default waits 2 s a poll). */
const fast = { updateIntervalInMs: 20 };

const put = (body: Body, group = nodeGroup) =>
  client.virtualMachines.beginCreateOrUpdateAndWait(group, vmNameFor(body.name), vmBody(body), fast);

async function created(body: Body): Promise<string> {
  await put(body);
  return vmNameFor(body.name);
}

async function removed(vmName: string): Promise<void> {
  await client.virtualMachines.beginDeleteAndWait(nodeGroup, vmName, fast);
}

/** A refusal naming the action over exactly this scope (AuthorizationFailed) or linked scope. */
function refusedFor(
  code: 'AuthorizationFailed' | 'LinkedAuthorizationFailed',
  action: string,
  scope: string,
) {
  return {
    code,
    message: expect.stringMatching(
      new RegExp(`${escape(action)}.*${escape(scope)}|${escape(scope)}.*${escape(action)}`, 'i'),
    ),
  };
}
const escape = (text: string): string => text.replace(/[.*+?^${}()|[\]\\/]/g, '\\$&');

describe('the shipped assignments', () => {
  it('resolve to the resources the app links and nothing wider', () => {
    expect(assignmentScopes(appSettings)).toEqual({
      subscription: [`/subscriptions/${subscriptionId}`],
      nodeResourceGroup: [`/subscriptions/${subscriptionId}/resourceGroups/${nodeGroup}`],
      nodeSubnet: [subnetId],
      kubeletIdentity: [kubeletIdentity],
      outboundBackendPool: [outboundPool],
      nodeSecurityGroup: [nodeNsg],
      capacityReservationGroup: [groupId],
      aksCluster: [],
      aksNamespace: [],
      aksSystemNamespace: [],
    });
    // The NSG is joined only when the NIC carries it; a group only when one is configured.
    const { ATTACH_NSG_TO_NIC: _attach, CAPACITY_RESERVATION_GROUP_IDS: _groups, ...managed } = appSettings;
    expect(assignmentScopes(managed)).toMatchObject({ nodeSecurityGroup: [], capacityReservationGroup: [] });
    // A setting left empty grants nothing (never the subscription in its place).
    expect(
      appAuthorization({ AZURE_SUBSCRIPTION_ID: subscriptionId }, undefined).assignments.map((a) => a.scope),
    ).toEqual([`/subscriptions/${subscriptionId}`]);
  });

  it('launch the VM the app builds, in a reservation group, and delete it, without a 403', async () => {
    const vmName = await created({ name: 'shipped', offering: reserved(groupId) });
    await client.virtualMachines.get(nodeGroup, vmName);
    await client.capacityReservationGroups.get(reservationsGroup, 'crg');
    await removed(vmName);
    expect(emulator.controls.requests({ status: 403 })).toEqual([]);
  });
});

describe('narrow: the same identity just outside each scope', () => {
  const addOnIdentity = `${providers}/Microsoft.ManagedIdentity/userAssignedIdentities/omsagent-scopes`;
  const inboundPool = `${providers}/Microsoft.Network/loadBalancers/kubernetes/backendAddressPools/kubernetes`;
  const otherNsg = `${providers}/Microsoft.Network/networkSecurityGroups/other-nsg`;
  const otherSubnet = subnetId.replace(/nodes$/, 'other');

  it.each([
    {
      case: 'an add-on identity of the node resource group instead of the kubelet identity',
      body: { name: 'addon-identity', kubeletIdentity: addOnIdentity },
      action: 'Microsoft.ManagedIdentity/userAssignedIdentities/assign/action',
      scope: addOnIdentity,
    },
    {
      case: "the load balancer's other backend pool",
      body: { name: 'inbound-pool', pools: [outboundPool, inboundPool] },
      action: 'Microsoft.Network/loadBalancers/backendAddressPools/join/action',
      scope: inboundPool,
    },
    {
      case: 'another NSG of the node resource group',
      body: { name: 'other-nsg', nsg: otherNsg },
      action: 'Microsoft.Network/networkSecurityGroups/join/action',
      scope: otherNsg,
    },
    {
      case: 'another subnet of the node VNet',
      body: { name: 'other-subnet', subnet: otherSubnet },
      action: 'Microsoft.Network/virtualNetworks/subnets/join/action',
      scope: otherSubnet,
    },
    {
      case: 'a reservation group not configured',
      body: { name: 'other-group', offering: reserved(unconfiguredGroupId) },
      action: 'Microsoft.Compute/capacityReservationGroups/deploy/action',
      scope: unconfiguredGroupId,
    },
  ])('a VM PUT linking $case: LinkedAuthorizationFailed, no VM', async ({ body, action, scope }) => {
    expect(await refusal(put(body))).toMatchObject(refusedFor('LinkedAuthorizationFailed', action, scope));
    expect(emulator.controls.vms().map((vm) => vm.name)).not.toContain(vmNameFor(body.name));
  });

  it('the refusals come from the scopes: with the link actions on the whole node resource group, the add-on identity goes through', async () => {
    // The layout these tests replaced: VM operator role with every link action, on the node resource group.
    const shipped = appAuthorization(appSettings, undefined);
    const linkActions = Object.values(customRoles())
      .filter((role) =>
        ['kubeletIdentity', 'outboundBackendPool', 'nodeSecurityGroup'].includes(role.assignedAt),
      )
      .flatMap((role) => role.actions);
    emulator.controls.setAuthorization({
      ...shipped,
      assignments: [
        ...shipped.assignments,
        {
          roleName: 'wide',
          actions: linkActions,
          scope: `/subscriptions/${subscriptionId}/resourceGroups/${nodeGroup}`,
        },
      ],
    });
    try {
      const vmName = await created({ name: 'wide-identity', kubeletIdentity: addOnIdentity });
      await removed(vmName);
    } finally {
      emulator.controls.setAuthorization(shipped);
    }
  });

  it('a reservation group not configured cannot be read either', async () => {
    expect(await refusal(client.capacityReservationGroups.get(reservationsGroup, 'other-crg'))).toMatchObject(
      refusedFor(
        'AuthorizationFailed',
        'Microsoft.Compute/capacityReservationGroups/read',
        unconfiguredGroupId,
      ),
    );
  });

  it('with no group configured, no group can be read or deployed into', async () => {
    const { CAPACITY_RESERVATION_GROUP_IDS: _groups, ...settings } = appSettings;
    await as(
      async () => {
        expect(await refusal(client.capacityReservationGroups.get(reservationsGroup, 'crg'))).toMatchObject({
          code: 'AuthorizationFailed',
        });
        expect(await refusal(put({ name: 'no-groups', offering: reserved(groupId) }))).toMatchObject(
          refusedFor(
            'LinkedAuthorizationFailed',
            'Microsoft.Compute/capacityReservationGroups/deploy/action',
            groupId,
          ),
        );
      },
      { settings },
    );
  });

  it('a VM of another resource group can be neither created, read nor deleted', async () => {
    const other = `/subscriptions/${subscriptionId}/resourceGroups/${otherGroup}/providers/Microsoft.Compute/virtualMachines/${vmNameFor('elsewhere')}`;
    expect(await refusal(put({ name: 'elsewhere' }, otherGroup))).toMatchObject(
      refusedFor('AuthorizationFailed', 'Microsoft.Compute/virtualMachines/write', other),
    );
    expect(await refusal(client.virtualMachines.get(otherGroup, vmNameFor('elsewhere')))).toMatchObject(
      refusedFor('AuthorizationFailed', 'Microsoft.Compute/virtualMachines/read', other),
    );
    expect(
      await refusal(client.virtualMachines.beginDeleteAndWait(otherGroup, vmNameFor('elsewhere'), fast)),
    ).toMatchObject(refusedFor('AuthorizationFailed', 'Microsoft.Compute/virtualMachines/delete', other));
    expect(
      await refusal(client.virtualMachines.beginRestartAndWait(otherGroup, vmNameFor('elsewhere'), fast)),
    ).toMatchObject(
      refusedFor('AuthorizationFailed', 'Microsoft.Compute/virtualMachines/restart/action', other),
    );
  });

  it("another subscription's catalog, operations, gallery, quota usages and placement scores cannot be read", async () => {
    const foreign = '00000000-0000-0000-0000-0000000000ff';
    const elsewhere = emulatorComputeClient(emulator, foreign);
    const foreignLocation = `/subscriptions/${foreign}/providers/Microsoft.Compute/locations/${location}`;
    // The SDK's pagers keep ARM's code but not its message.
    expect(await refusal(listed(elsewhere.resourceSkus.list()))).toMatchObject({
      code: 'AuthorizationFailed',
    });
    expect(
      await refusal(
        listed(
          elsewhere.communityGalleryImageVersions.list(
            location,
            'AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2',
            '2404gen2containerd',
          ),
        ),
      ),
    ).toMatchObject({ code: 'AuthorizationFailed' });
    expect(await refusal(operationStatus(elsewhere, foreign))).toMatchObject(
      refusedFor('AuthorizationFailed', 'Microsoft.Compute/locations/operations/read', foreignLocation),
    );
    expect(await refusal(listed(elsewhere.usage.list(location)))).toMatchObject({
      code: 'AuthorizationFailed',
    });
    expect(await refusal(placementScores(elsewhere, foreign))).toMatchObject(
      refusedFor(
        'AuthorizationFailed',
        'Microsoft.Compute/locations/placementScores/generate/action',
        foreignLocation,
      ),
    );
    expect(await refusal(elsewhere.virtualMachines.get(nodeGroup, vmNameFor('elsewhere')))).toMatchObject(
      refusedFor(
        'AuthorizationFailed',
        'Microsoft.Compute/virtualMachines/read',
        `/subscriptions/${foreign}`,
      ),
    );
  });
});

/** How each action is used: the request that needs it, with the code ARM refuses it with. */
type Use =
  | 'put'
  | 'delete'
  | 'get'
  | 'restart'
  | 'skus'
  | 'operation'
  | 'gallery'
  | 'usages'
  | 'scores'
  | 'groupRead'
  | 'reservations';
const USE: Record<string, Use> = {
  'Microsoft.Compute/virtualMachines/read': 'get',
  'Microsoft.Compute/virtualMachines/write': 'put',
  'Microsoft.Compute/virtualMachines/delete': 'delete',
  'Microsoft.Compute/virtualMachines/restart/action': 'restart',
  'Microsoft.Compute/disks/write': 'put',
  'Microsoft.Compute/disks/delete': 'delete',
  'Microsoft.Network/networkInterfaces/write': 'put',
  'Microsoft.Network/networkInterfaces/delete': 'delete',
  'Microsoft.Network/networkInterfaces/join/action': 'put',
  'Microsoft.ManagedIdentity/userAssignedIdentities/assign/action': 'put',
  'Microsoft.Network/loadBalancers/backendAddressPools/join/action': 'put',
  'Microsoft.Network/networkSecurityGroups/join/action': 'put',
  'Microsoft.Network/virtualNetworks/subnets/join/action': 'put',
  'Microsoft.Compute/skus/read': 'skus',
  'Microsoft.Compute/locations/operations/read': 'operation',
  'Microsoft.Compute/locations/communityGalleries/images/versions/read': 'gallery',
  'Microsoft.Compute/locations/usages/read': 'usages',
  'Microsoft.Compute/locations/placementScores/generate/action': 'scores',
  'Microsoft.Compute/capacityReservationGroups/read': 'groupRead',
  'Microsoft.Compute/capacityReservationGroups/capacityReservations/read': 'reservations',
  'Microsoft.Compute/capacityReservationGroups/deploy/action': 'put',
};

async function use(kind: Use, name: string): Promise<unknown> {
  const vmName = vmNameFor(name);
  switch (kind) {
    case 'put':
      return put({ name, offering: reserved(groupId) });
    case 'delete':
      return client.virtualMachines.beginDeleteAndWait(nodeGroup, vmName, fast);
    case 'get':
      return client.virtualMachines.get(nodeGroup, vmName);
    case 'restart':
      return client.virtualMachines.beginRestartAndWait(nodeGroup, vmName, fast);
    case 'skus':
      return listed(client.resourceSkus.list({ filter: `location eq '${location}'` }));
    case 'operation':
      return put({ name });
    case 'gallery':
      return listed(
        client.communityGalleryImageVersions.list(
          location,
          'AKSUbuntu-38d80f77-467a-481f-a8d4-09b6d4220bd2',
          '2404gen2containerd',
        ),
      );
    case 'usages':
      return listed(client.usage.list(location));
    case 'scores':
      return placementScores(client, subscriptionId);
    case 'groupRead':
      return client.capacityReservationGroups.get(reservationsGroup, 'crg');
    case 'reservations':
      return listed(client.capacityReservations.listByCapacityReservationGroup(reservationsGroup, 'crg'));
  }
}

describe('needed: without any one action, the request that uses it is refused', () => {
  const cases = Object.entries(customRoles()).flatMap(([role, definition]) =>
    definition.actions.map((action) => ({ role, action })),
  );

  it('every action of every custom role has a request here', () => {
    expect(cases.filter(({ action }) => USE[action] === undefined)).toEqual([]);
    expect(cases.length).toBeGreaterThan(15);
  });

  it.each(cases)('$role without $action', async ({ role, action }) => {
    const kind = USE[action] as Use;
    const name = `needed-${cases.findIndex((c) => c.action === action)}`;
    // What the request acts on exists first, made with every grant in place.
    const existing = ['delete', 'get', 'restart'].includes(kind) ? await created({ name }) : undefined;
    const refused = await as(() => refusal(use(kind, name)), { without: { role, action } });
    // The SDK's pagers keep ARM's code but not its message.
    expect(refused.code).toMatch(/^(Linked)?AuthorizationFailed$/);
    if (!['skus', 'gallery', 'usages', 'reservations'].includes(kind))
      expect(refused.message).toContain(action);
    // Leave nothing behind: a VM the refused poll or deletion left is deleted with every grant.
    if (existing || kind === 'operation' || kind === 'delete')
      await client.virtualMachines
        .beginDeleteAndWait(nodeGroup, vmNameFor(name), fast)
        .catch(() => undefined);
  });
});
