// Least privilege, end to end: the Function App runs as its shipped Kubernetes identity and the ARM
// emulator enforces its shipped Azure roles. Without the VM role's NSG join action, a launch ends
// Launched=False naming the action and its scope, with one event, no VM and no further PUT however often
// the NodeClaim is announced; without the VM read, the same, from the read before any PUT; without the
// read of Compute operations, the same from the launch monitor's first poll of an accepted PUT (its VM
// deleted, the NodeClaim kept); and a VM of someone else's that already has a NodeClaim's VM name is never
// adopted, nor deleted when the NodeClaim goes.
import { randomUUID } from 'node:crypto';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { findCondition } from '../../shared/decisions/conditions.js';
import { vmNameFor, VmTags } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import type { NodeClaim } from '../../shared/models/index.js';
import { emulatorComputeClient, linuxVmParameters } from '../support/arm-client.js';
import { nodeClass } from '../support/fixtures.js';
import { eventually, startLaunchStack, type LaunchStack } from '../support/launch-stack.js';
import { announceNodeClaim, launchNodeClaim } from '../support/launch-nodeclaim.js';

const NSG_JOIN = 'Microsoft.Network/networkSecurityGroups/join/action';
const VM_READ = 'Microsoft.Compute/virtualMachines/read';
const OPERATIONS_READ = 'Microsoft.Compute/locations/operations/read';
const suffix = randomUUID().slice(0, 6);

async function launchedCondition(stack: LaunchStack, name: string, reason: string) {
  return eventually(async () => {
    const current = await stack.admin.objects.nodeClaims.get(name);
    const launched = findCondition(current?.status?.conditions, 'Launched');
    return launched?.reason === reason ? launched : undefined;
  }, `Launched=False ${reason} on ${name}`);
}

/**
 * The warnings of one reason about a NodeClaim, once there is at least one. The event is written after
 * the condition it explains, so a read right after the condition is seen can come before it.
 */
async function warningsAbout(stack: LaunchStack, nodeClaim: NodeClaim, reason: string) {
  const { core } = await stack.admin.kube();
  return eventually(async () => {
    const list = await core.listNamespacedEvent({
      namespace: 'default',
      fieldSelector: `involvedObject.name=${nodeClaim.metadata.name}`,
    });
    const warnings = list.items.filter((event) => event.reason === reason);
    return warnings.length > 0 ? warnings : undefined;
  }, `a ${reason} event about ${nodeClaim.metadata.name}`);
}

async function reannounce(stack: LaunchStack, nodeClaim: NodeClaim, times: number): Promise<void> {
  for (let i = 0; i < times; i += 1) await announceNodeClaim(stack, nodeClaim);
}

/** Until the host's queue is empty again, so every announcement above has been handled. */
async function queueDrained(stack: LaunchStack): Promise<void> {
  await eventually(async () => {
    return (await stack.pendingMessages()) === 0 ? true : undefined;
  }, 'the events queue to drain');
}

describe('a VM role without the NSG join action', () => {
  let stack: LaunchStack;
  const className = `nsg-${suffix}`;

  beforeAll(async () => {
    // A BYO VNet: the NIC itself joins the node NSG (ATTACH_NSG_TO_NIC), so the VM PUT links it.
    stack = await startLaunchStack({
      env: { ATTACH_NSG_TO_NIC: 'true' },
      azureRoleWithout: { role: 'nodeSecurityGroupJoiner', action: NSG_JOIN },
    });
    await stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  });
  afterAll(async () => {
    await stack?.admin.objects.nodeClasses.delete(className).catch(() => undefined);
    await stack?.stop();
  });

  it('ends Launched=False naming the action and scope: one event, no VM, no retried PUT', async () => {
    const nodeClaim = await launchNodeClaim(stack, className);
    const vmName = vmNameFor(nodeClaim.metadata.name);
    const launched = await launchedCondition(stack, nodeClaim.metadata.name, 'AuthorizationFailed');
    expect(launched.status).toBe('False');
    const nsg = stack.settings.cluster.nodeSecurityGroupId ?? '';
    expect(nsg).not.toBe('');
    expect(launched.message).toContain(`lacks ${NSG_JOIN} on ${nsg}`);

    // Announced again and again, and swept: the refused PUT is never sent again.
    await reannounce(stack, nodeClaim, 3);
    await queueDrained(stack);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const puts = stack.emulator.controls.requests({ method: 'PUT', vmName });
    expect(puts.map((put) => [put.status, put.errorCode])).toEqual([[403, 'LinkedAuthorizationFailed']]);
    expect(stack.emulator.controls.vms().filter((vm) => vm.name === vmName)).toEqual([]);
    const events = await warningsAbout(stack, nodeClaim, 'AuthorizationFailed');
    expect(events).toHaveLength(1);
    expect(events[0]?.message).toContain(NSG_JOIN);
    expect((await stack.admin.objects.nodeClaims.get(nodeClaim.metadata.name))?.status?.providerID).toBe(
      undefined,
    );
    await stack.admin.objects.nodeClaims.delete(nodeClaim.metadata.name);
  });
});

describe('a VM role without virtualMachines/read', () => {
  let stack: LaunchStack;
  const className = `vmread-${suffix}`;

  beforeAll(async () => {
    stack = await startLaunchStack({ azureRoleWithout: { role: 'vmOperator', action: VM_READ } });
    await stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  });
  afterAll(async () => {
    await stack?.admin.objects.nodeClasses.delete(className).catch(() => undefined);
    await stack?.stop();
  });

  it('ends Launched=False naming the read it was refused: no PUT, and the read is not retried', async () => {
    const nodeClaim = await launchNodeClaim(stack, className);
    const vmName = vmNameFor(nodeClaim.metadata.name);
    const launched = await launchedCondition(stack, nodeClaim.metadata.name, 'AuthorizationFailed');
    expect(launched.status).toBe('False');
    expect(launched.message).toContain(`lacks ${VM_READ}`);

    await reannounce(stack, nodeClaim, 3);
    await queueDrained(stack);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const requests = stack.emulator.controls.requests({ vmName });
    expect(requests.map((r) => [r.method, r.status, r.errorCode])).toEqual([
      ['GET', 403, 'AuthorizationFailed'],
    ]);
    expect(await warningsAbout(stack, nodeClaim, 'AuthorizationFailed')).toHaveLength(1);
  });
});

describe('a catalog role without the read of Compute operations', () => {
  let stack: LaunchStack;
  const className = `opread-${suffix}`;

  beforeAll(async () => {
    stack = await startLaunchStack({
      azureRoleWithout: { role: 'computeCatalogReader', action: OPERATIONS_READ },
    });
    await stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  });
  afterAll(async () => {
    await stack?.admin.objects.nodeClasses.delete(className).catch(() => undefined);
    await stack?.stop();
  });

  it('ends Launched=False naming the refused poll: the VM deleted, the NodeClaim kept, no second PUT', async () => {
    const nodeClaim = await launchNodeClaim(stack, className);
    const name = nodeClaim.metadata.name;
    const vmName = vmNameFor(name);
    const launched = await launchedCondition(stack, name, 'AuthorizationFailed');
    expect(launched.status).toBe('False');
    expect(launched.message).toContain(`lacks ${OPERATIONS_READ}`);
    await eventually(
      async () => (stack.emulator.controls.vms().some((vm) => vm.name === vmName) ? undefined : true),
      'the VM to be deleted',
    );

    // Announced again and swept: the NodeClaim waits; nothing is created again.
    await reannounce(stack, nodeClaim, 3);
    await queueDrained(stack);
    await new Promise((resolve) => setTimeout(resolve, 2_000));
    const puts = stack.emulator.controls.requests({ method: 'PUT', vmName });
    expect(puts).toHaveLength(1);
    expect(puts[0]?.status).toBeLessThan(300);
    expect(stack.emulator.controls.requests({ method: 'DELETE', vmName }).length).toBeGreaterThan(0);
    expect(await warningsAbout(stack, nodeClaim, 'AuthorizationFailed')).toHaveLength(1);
    const kept = await stack.admin.objects.nodeClaims.get(name);
    expect(kept?.metadata.deletionTimestamp).toBeUndefined();
    expect(findCondition(kept?.status?.conditions, 'Launched')?.reason).toBe('AuthorizationFailed');
    await stack.admin.objects.nodeClaims.delete(name);
  });
});

describe("a VM of someone else's with the NodeClaim's VM name", () => {
  let stack: LaunchStack;
  const className = `foreign-${suffix}`;

  beforeAll(async () => {
    stack = await startLaunchStack();
    await stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
  });
  afterAll(async () => {
    await stack?.admin.objects.nodeClasses.delete(className).catch(() => undefined);
    await stack?.stop();
  });

  it('is never adopted, nor deleted with the NodeClaim', async () => {
    // The NodeClaim's name is chosen first, so the foreign VM can take its VM name before it launches.
    const name = `${className}-${randomUUID().slice(0, 4)}`;
    const vmName = vmNameFor(name);
    const { subscriptionId, resourceGroup, location } = stack.settings.azure;
    // Someone else, with rights of their own, created it: the app's role assignments do not apply.
    const appAuthorization = stack.emulator.controls.authorization();
    stack.emulator.controls.setAuthorization(undefined);
    try {
      await emulatorComputeClient(stack.emulator, subscriptionId).virtualMachines.beginCreateOrUpdateAndWait(
        resourceGroup,
        vmName,
        linuxVmParameters({
          name: vmName,
          subscriptionId,
          resourceGroup,
          location,
          zone: '1',
          vmSize: 'Standard_D2s_v5',
          tags: { [VmTags.cluster]: 'another-cluster', [VmTags.nodeClaim]: name },
        }),
      );
    } finally {
      stack.emulator.controls.setAuthorization(appAuthorization);
    }
    const foreign = stack.emulator.controls.vms().find((vm) => vm.name === vmName);
    expect(foreign?.provisioningState).toBe('Succeeded');
    const before = stack.emulator.controls.requests().at(-1)?.seq ?? 0;

    const nodeClaim = await launchNodeClaim(stack, className, name);
    const launched = await launchedCondition(stack, name, 'VMNameConflict');
    expect(launched.message).toContain(`${VmTags.cluster} is "another-cluster"`);
    expect((await stack.admin.objects.nodeClaims.get(name))?.status?.providerID).toBe(undefined);
    expect(await warningsAbout(stack, nodeClaim, 'VMNameConflict')).toHaveLength(1);

    // Deleted: termination finds the VM is not its own and leaves it.
    await stack.admin.objects.nodeClaims.delete(name);
    await announceNodeClaim(stack, nodeClaim);
    await eventually(
      async () => ((await stack.admin.objects.nodeClaims.get(name)) ? undefined : true),
      'the NodeClaim to be gone',
    );
    const touched = stack.emulator.controls
      .requests({ vmName, afterSeq: before })
      .filter((request) => request.method !== 'GET');
    expect(touched).toEqual([]);
    const after = stack.emulator.controls.vms().find((vm) => vm.name === vmName);
    expect(after).toMatchObject({ provisioningState: 'Succeeded', vmId: foreign?.vmId });
  });
});
