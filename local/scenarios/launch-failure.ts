// launch-failure: Azure refuses some launches. One VM's creation fails in the LRO with a zonal allocation
// failure; another's PUT is refused for family core quota. Each NodeClaim must show Launched=False with a
// classified reason at the first poll after Azure reported the failure (the PUT's answer for quota), the
// failed offering must be avoided (the emulator keeps failing it, as an exhausted zone or quota would),
// and the replacement NodeClaim — created as Karpenter's provisioner would — must launch and initialize.
import { findCondition } from '../../shared/decisions/conditions.js';
import { vmNameFor } from '../../shared/cloudprovider/azure/decisions/vm-spec.js';
import type {
  PollVmCreationInput,
  PollVmCreationResult,
} from '../../shared/lifecycle/launch/launch-monitor.js';
import type {
  AwaitVmCreationInput,
  AwaitVmCreationResult,
} from '../../shared/lifecycle/launch/launch-monitor-v2.js';
import { LaunchMonitorNames } from '../../shared/runtime/function-names.js';
import { ConditionTypes, WellKnown, type NodeClaim } from '../../shared/models/index.js';
import { activityAnswerOf } from '../../shared/lifecycle/durable/outage-retry.js';
import type { FaultMatch, FaultRuleInput } from '../arm-emulator/index.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import {
  deleteNodeClaims,
  createNodeClassAndPool,
  deleteNodePoolAndClass,
  exampleNodePool,
  nodeClaimFor,
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from './scenario.js';

interface FailureCase {
  suffix: string;
  fault: FaultRuleInput['effect'];
  expectedReason: string;
  /** Where Azure fails: in the LRO (seen by a poll) or on the PUT (seen by the launch function). */
  surfaces: 'lro' | 'put';
  /** What stays unavailable afterwards: the emulator keeps failing launches there. */
  keepFailing: (offering: { vmSize: string; zone: string }) => FaultMatch;
}

const cases: FailureCase[] = [
  {
    suffix: 'zonal',
    fault: { type: 'ZonalAllocationFailed' },
    expectedReason: 'ZonalAllocationFailure',
    surfaces: 'lro',
    keepFailing: ({ vmSize, zone }) => ({ vmSize, zone }),
  },
  {
    suffix: 'quota',
    fault: { type: 'familyQuota' },
    expectedReason: 'SubscriptionQuotaReached',
    surfaces: 'put',
    keepFailing: ({ vmSize }) => ({ vmSize }),
  },
];

export const launchFailure: Scenario = {
  name: 'launch-failure',
  title: 'launch failure: reasons at the first poll, failed offerings avoided, replacements succeed',
  description:
    'The emulator fails one VM creation with ZonalAllocationFailed (in the LRO) and refuses another PUT for family ' +
    'core quota. Each NodeClaim shows Launched=False with its reason at the first poll after the failure, the failed ' +
    'offering is avoided, and a replacement NodeClaim launches elsewhere and initializes.',
  usesPods: false,
  play,
};

interface CaseResult {
  name: string;
  vmName: string;
  reason: string | undefined;
  failedAt: number;
  reportedAt: number;
  offering: { vmSize: string; zone: string } | undefined;
  replacement: string;
  replacementOffering: string | undefined;
  pollsAfterFailure: number;
  /** A poll answered Failed before Launched=False was seen. */
  reportedByPoll: boolean;
}

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, recorder, runId } = context;
  const objects = stack.admin.objects;
  const controls = stack.emulator.controls;
  const name = `fail-${runId}`;
  const nodePool = exampleNodePool(name, runId, name);
  await createNodeClassAndPool(context, nodePool);
  const persistentFaults: string[] = [];

  const runCase = async (failure: FailureCase): Promise<CaseResult> => {
    const claimName = `${name}-${failure.suffix}`;
    const vmName = vmNameFor(claimName);
    controls.injectFault({ match: { vmName }, effect: failure.fault, times: 1 });
    context.note(`fault armed for ${vmName}: ${failure.fault.type}`);
    await objects.nodeClaims.create(nodeClaimFor(nodePool, claimName));

    const failed = await waitFor(context, `Launched=False on ${claimName}`, patience(stack), () => {
      const observation = recorder.history.nodeClaims.find(
        (o) => o.object.metadata.name === claimName && launchedStatus(o.object) === 'False',
      );
      return observation;
    });
    const reason = findCondition(failed.object.status?.conditions, ConditionTypes.launched)?.reason;
    const offering = offeringOf(failed.object);
    context.note(
      `${claimName}: Launched=False ${reason ?? '?'} on ${offering ? `${offering.vmSize} zone ${offering.zone}` : 'no offering'}`,
    );
    if (offering) {
      // The zone (or the quota) stays exhausted: a launch that did not avoid the offering would fail again.
      persistentFaults.push(
        controls.injectFault({ match: failure.keepFailing(offering), effect: failure.fault }).id,
      );
    }
    const failedAt =
      failure.surfaces === 'lro'
        ? (recorder.history.vms.find((v) => v.vm.name === vmName && v.type === 'failed')?.at ?? Number.NaN)
        : Date.parse(controls.requests({ vmName, method: 'PUT' })[0]?.time ?? '');
    // The monitor's polls: one call each of the first version's activity, or calls of the second's, each
    // polling at the monitor's pace until it sees an outcome (so a call running when the VM failed reads
    // the failure at its next poll).
    const polls = recorder.history.activities.filter(
      (call) =>
        call.startedAt <= failed.at &&
        ((call.functionName === LaunchMonitorNames.pollVmCreation &&
          (call.input as PollVmCreationInput).vmName === vmName) ||
          (call.functionName === LaunchMonitorNames.awaitVmCreation &&
            (call.input as AwaitVmCreationInput).monitor.vmName === vmName)),
    );
    // A poll already in flight when the VM failed may be the one that reads the failure (then none has
    // to start after it); otherwise the first poll that starts after the failure must read it.
    const pollsAfterFailure = polls.filter((call) => call.startedAt >= failedAt).length;
    const reportedByPoll = polls.some(
      (call) =>
        (activityAnswerOf(call.result) as PollVmCreationResult | AwaitVmCreationResult | undefined)
          ?.status === 'Failed' && call.endedAt <= failed.at,
    );

    await waitFor(context, `${claimName} to be removed after its failure`, patience(stack), () =>
      recorder.nodeClaims.has(claimName) ? undefined : true,
    );
    const replacement = `${claimName}-r`;
    await objects.nodeClaims.create(nodeClaimFor(nodePool, replacement));
    context.note(`${claimName} removed; created replacement ${replacement}`);
    const initialized = await waitFor(
      context,
      `${replacement} to be Initialized`,
      patience(stack),
      () => {
        const current = recorder.nodeClaims.get(replacement);
        return findCondition(current?.status?.conditions, ConditionTypes.initialized)?.status === 'True'
          ? current
          : undefined;
      },
      () => {
        const current = recorder.nodeClaims.get(replacement);
        if (!current) return `${replacement} is gone`;
        const conditions = (current.status?.conditions ?? [])
          .map((c) => `${c.type}=${c.status}${c.reason ? ` ${c.reason}` : ''}`)
          .join(', ');
        return `${replacement}: ${conditions || 'no conditions'}; providerID ${current.status?.providerID ?? 'unset'}`;
      },
    );
    const replacementOffering = offeringOf(initialized);
    return {
      name: claimName,
      vmName,
      reason,
      failedAt,
      reportedAt: failed.at,
      offering,
      replacement,
      replacementOffering: replacementOffering
        ? `${replacementOffering.vmSize} zone ${replacementOffering.zone}`
        : undefined,
      pollsAfterFailure,
      reportedByPoll,
    };
  };

  const started = Date.now();
  // One after the other: the offering the first failure leaves exhausted must not catch the second launch.
  const results: CaseResult[] = [];
  for (const failure of cases) results.push(await runCase(failure));
  const makespanMs = Date.now() - started;
  for (const id of persistentFaults) controls.removeFault(id);

  const invariants: Invariant[] = [];
  results.forEach((result, index) => {
    const failure = cases[index] as FailureCase;
    const failedOffering = result.offering
      ? `${result.offering.vmSize} zone ${result.offering.zone}`
      : undefined;
    invariants.push(
      {
        name: `${result.name}: Launched=False with reason ${failure.expectedReason}`,
        holds: result.reason === failure.expectedReason,
        detail: `reason ${result.reason ?? '(none)'}`,
      },
      {
        name:
          failure.surfaces === 'lro'
            ? `${result.name}: reported by the first poll after the VM failed (within one poll interval)`
            : `${result.name}: reported by the launch itself, without waiting for any poll`,
        holds:
          failure.surfaces === 'lro'
            ? result.reportedByPoll && result.pollsAfterFailure <= 1
            : result.pollsAfterFailure === 0,
        detail: `${result.pollsAfterFailure} poll(s) started between the failure and Launched=False${failure.surfaces === 'lro' && !result.reportedByPoll ? ', none of them answered Failed' : ''}; ${(result.reportedAt - result.failedAt).toFixed(0)} ms (poll interval ${stack.timings.pollIntervalSeconds}–${stack.timings.maxPollIntervalSeconds} s)`,
      },
      {
        name: `${result.replacement}: launched on another offering and initialized`,
        holds: result.replacementOffering !== undefined && result.replacementOffering !== failedOffering,
        detail: `failed on ${failedOffering ?? '?'}, replacement on ${result.replacementOffering ?? '?'}`,
      },
    );
  });
  const marks: TimelineMark[] = results.map((result) => ({
    row: result.name,
    at: result.failedAt,
    label: `Azure reported the failure of ${result.vmName}`,
    kind: 'failure',
  }));
  const summary = [
    `failures injected: ${cases.length}, replacements initialized: ${results.length}, makespan ${(makespanMs / 1000).toFixed(1)} s`,
    ...results.map(
      (r) =>
        `  ${r.name}: ${r.reason ?? '?'} ${((r.reportedAt - r.failedAt) / 1000).toFixed(2)} s after Azure's answer; replacement on ${r.replacementOffering ?? '?'}`,
    ),
  ];

  await deleteNodeClaims(
    context,
    results.map((r) => r.replacement),
    patience(stack),
  );
  await deleteNodePoolAndClass(context, nodePool);
  return {
    invariants,
    summary,
    marks,
    figures: Object.fromEntries([
      ['makespanMs', makespanMs],
      ...results.map((r) => [`${r.name}.reportMs`, Math.round(r.reportedAt - r.failedAt)] as const),
    ]),
  };
}

function launchedStatus(nodeClaim: NodeClaim): string | undefined {
  return findCondition(nodeClaim.status?.conditions, ConditionTypes.launched)?.status;
}

function offeringOf(nodeClaim: NodeClaim): { vmSize: string; zone: string } | undefined {
  const labels = nodeClaim.metadata.labels ?? {};
  const vmSize = labels[WellKnown.instanceTypeLabel];
  const zone = labels[WellKnown.zoneLabel]?.split('-').at(-1);
  return vmSize && zone ? { vmSize, zone } : undefined;
}
