// The mutation check of the custom Azure roles (infra/azure-roles.json): for each action, one at a time,
// a launch stack whose emulator lacks just that action launches a NodeClaim and deletes it again (on a
// BYO VNet, so the NIC links the NSG too). Every action must be refused somewhere in that cycle, or no
// test needs it and it does not belong in the role; with every action granted the cycle completes
// without a single 403. The table it prints is the one in docs/permissions.md. About four minutes, so it
// runs only when asked: NODECLAIM_MUTATION_CHECK=1 npx vitest run test/e2e/azure-role-mutations.test.ts
// Its fast half runs in CI: test/integration/arm-scopes.test.ts removes each action at the emulator (the
// request that uses it is refused) and shows every grant refused just outside its scope.
import { randomUUID } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { afterAll, describe, expect, it } from 'vitest';
import { customRoles } from '../../local/stack/azure-role-assignments.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { nodeClass } from '../support/fixtures.js';
import { startLaunchStack, type LaunchStack } from '../support/launch-stack.js';
import { announceNodeClaim, launchNodeClaim } from '../support/launch-nodeclaim.js';

/** How long each phase may take before the cycle is judged stuck (the refusals are what count). */
const PHASE_MS = 12_000;
const rows: string[] = [];

async function within(probe: () => Promise<boolean>, ms: number): Promise<boolean> {
  const deadline = Date.now() + ms;
  while (Date.now() < deadline) {
    if (await probe()) return true;
    await new Promise((resolve) => setTimeout(resolve, 200));
  }
  return false;
}

interface Cycle {
  launched: boolean;
  gone: boolean;
  refused: string[];
}

/** Launch one NodeClaim and delete it; what ARM refused on the way (request kind and code). */
async function launchAndDelete(stack: LaunchStack, className: string): Promise<Cycle> {
  const refusedNow = (): string[] =>
    stack.emulator.controls
      .requests({ status: 403 })
      .map((request) => `${request.kind ?? request.method} ${request.errorCode ?? ''}`);
  const nodeClaim = await launchNodeClaim(stack, className);
  const name = nodeClaim.metadata.name;
  const launched = await within(async () => {
    const current = await stack.admin.objects.nodeClaims.get(name);
    return findCondition(current?.status?.conditions, 'Launched')?.status === 'True';
  }, PHASE_MS);
  const vmName = vmNameFor(name);
  await stack.admin.objects.nodeClaims.delete(name);
  await announceNodeClaim(stack, nodeClaim);
  const gone = await within(
    async () =>
      !(await stack.admin.objects.nodeClaims.get(name)) &&
      !stack.emulator.controls.vms().some((vm) => vm.name === vmName),
    PHASE_MS,
  );
  if (!gone) {
    // Leave nothing behind for the next mutation: the finalizer goes, the VM is removed as admin would.
    await stack.admin.objects.nodeClaims
      .mergePatch(name, { metadata: { finalizers: [] } })
      .catch(() => undefined);
  }
  return { launched, gone, refused: [...new Set(refusedNow())] };
}

async function cycleWithout(role: string | undefined, action: string | undefined): Promise<Cycle> {
  const className = `mut-${randomUUID().slice(0, 6)}`;
  const stack = await startLaunchStack({
    env: { ATTACH_NSG_TO_NIC: 'true' },
    ...(role && action ? { azureRoleWithout: { role, action } } : {}),
  });
  try {
    await stack.admin.objects.nodeClasses.create(nodeClass(className, 'Ubuntu2204'));
    return await launchAndDelete(stack, className);
  } finally {
    await stack.admin.objects.nodeClasses.delete(className).catch(() => undefined);
    await stack.stop();
  }
}

/**
 * Actions a launch and a deletion never reach, each with the test that is refused without it: node
 * repair's reboot, and a VM PUT naming a capacity reservation group (a launch here names none).
 */
const TESTED_ELSEWHERE: Readonly<Record<string, string>> = {
  'Microsoft.Compute/virtualMachines/restart/action': 'test/integration/vm-restart-preemption.test.ts',
  'Microsoft.Compute/capacityReservationGroups/read': 'test/integration/capacity-reservation-groups.test.ts',
  'Microsoft.Compute/capacityReservationGroups/capacityReservations/read':
    'test/integration/capacity-reservation-groups.test.ts',
  'Microsoft.Compute/capacityReservationGroups/deploy/action':
    'test/integration/capacity-reservation-groups.test.ts',
};

afterAll(() => {
  if (rows.length > 0)
    console.log(['| Role | Action | Without it |', '| --- | --- | --- |', ...rows].join('\n'));
});

describe.runIf(process.env.NODECLAIM_MUTATION_CHECK === '1')(
  'the custom Azure roles, one action removed at a time',
  () => {
    it('with every action granted, a NodeClaim launches and is deleted without a single 403', async () => {
      const cycle = await cycleWithout(undefined, undefined);
      expect(cycle).toEqual({ launched: true, gone: true, refused: [] });
    });

    const cases = Object.entries(customRoles()).flatMap(([role, definition]) =>
      definition.actions
        .filter((action) => TESTED_ELSEWHERE[action] === undefined)
        .map((action) => ({ role, action })),
    );
    it('every action a launch cycle never reaches names a test that exists and names the action', () => {
      const all = new Set(Object.values(customRoles()).flatMap((definition) => definition.actions));
      for (const [action, file] of Object.entries(TESTED_ELSEWHERE)) {
        expect(all.has(action), `${action} is in no custom role`).toBe(true);
        expect(readFileSync(file, 'utf8'), `${file} names ${action}`).toContain(action);
      }
    });
    it.each(cases)('$role without $action: some request is refused', async ({ role, action }) => {
      const cycle = await cycleWithout(role, action);
      const outcome =
        cycle.refused.length === 0
          ? 'nothing refused: no test needs it'
          : `refused ${cycle.refused.join(', ')}; ${cycle.launched ? 'launched' : 'never Launched=True'}, ${cycle.gone ? 'deleted' : 'not deleted'}`;
      rows.push(`| ${role} | \`${action}\` | ${outcome} |`);
      expect(cycle.refused, `${action} is needed by nothing in a launch and a deletion`).not.toEqual([]);
    });
  },
);
