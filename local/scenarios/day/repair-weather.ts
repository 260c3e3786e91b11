// The two weather entries node repair answers, each caused through the control a person would use and then
// only watched: a node's kubelet dies (the kubelet simulator's stopKubelet; the real kube-controller-manager
// marks the Node Ready=Unknown after its grace period, and the app reboots the VM, then replaces the node
// when the fault outlives the reboot), and Azure preempts a spot VM (the ARM emulator's preemptVm: the
// eviction notice, then the eviction; the app replaces the node before it). What the app did and when is
// read from the recorder's view, for the summary; the invariants judge the rest from the history.
import { isConditionTrue } from '../../../shared/decisions/conditions.js';
import { DisruptionAnnotations, disruptionReasonOf } from '../../../shared/decisions/disruption-state.js';
import { parseProviderId } from '../../../shared/cloudprovider/azure/decisions/vm-spec.js';
import { ConditionTypes, WellKnown, type NodeClaim } from '../../../shared/models/index.js';
import type { LocalStack } from '../../stack/local-stack.js';
import type { Recorder } from '../../view/recorder.js';
import type { WeatherEntry } from './plan.js';
import { poolObjectName } from './workload.js';

/** The repair workflow's record of reboots on the NodeClaim (repair/repair-activities.ts). */
const REBOOTS_ANNOTATION = 'karpenter.azure.com/repair-reboots';

export interface RepairWeatherDependencies {
  stack: LocalStack;
  recorder: Recorder;
  runId: string;
  /** The DaemonSet's `app` label: its pods are on every node and say nothing about the node's work. */
  daemonSet: string;
  /** The `app` labels of the pods annotated karpenter.sh/do-not-disrupt. */
  doNotDisrupt: ReadonlySet<string>;
  /** Wall time by which the entry stops watching (the day's end): what is left, the end state judges. */
  until: number;
  note(line: string): void;
  onBrokenNode(node: string, at: number): void;
}

export interface RepairWeatherResult {
  outcome?: string;
  notPlayed?: string;
  endedAt: number;
}

const initialized = (claim: NodeClaim): boolean =>
  isConditionTrue(claim.status?.conditions, ConditionTypes.initialized);

/** The pool's NodeClaims that run a Node nothing is disrupting, with the pods of the day on each. */
function healthyClaims(deps: RepairWeatherDependencies, pool: string) {
  const running = new Set(deps.stack.simulator.nodes());
  return [...deps.recorder.nodeClaims.values()]
    .filter(
      (c) =>
        c.metadata.labels?.[WellKnown.nodePoolLabel] === pool &&
        initialized(c) &&
        !c.metadata.deletionTimestamp &&
        disruptionReasonOf(c) === undefined &&
        running.has(c.status?.nodeName ?? ''),
    )
    .map((claim) => ({
      claim,
      node: claim.status?.nodeName ?? '',
      pods: podsOn(deps, claim.status?.nodeName),
    }));
}

function podsOn(deps: RepairWeatherDependencies, nodeName: string | undefined): string[] {
  return [...deps.recorder.pods.values()]
    .filter(
      (p) =>
        p.spec?.nodeName === nodeName &&
        !p.metadata.deletionTimestamp &&
        p.metadata.labels?.app !== deps.daemonSet,
    )
    .map((p) => p.metadata.name)
    .sort();
}

const seconds = (from: number, to: number | undefined): string =>
  to === undefined ? '?' : `${((to - from) / 1000).toFixed(1)} s`;

const replacementOf = (deps: RepairWeatherDependencies, old: string): NodeClaim | undefined =>
  [...deps.recorder.nodeClaims.values()].find(
    (c) => c.metadata.annotations?.[DisruptionAnnotations.replacementOf] === old,
  );

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/**
 * Stops the kubelet of the pool's node that carries the most of the day's pods (ties: by name), then
 * watches until the node is Ready again after a reboot, or is gone and its replacement Initialized.
 */
export async function playNodeNotReady(
  entry: Extract<WeatherEntry, { kind: 'nodeNotReady' }>,
  deps: RepairWeatherDependencies,
): Promise<RepairWeatherResult> {
  const pool = poolObjectName(entry.pool, deps.runId);
  // Not a node running a do-not-disrupt pod: repair ignores the annotation, but termination does not
  // evict such a pod before the NodeClaim's terminationGracePeriod, which the day's pools do not set, so
  // a replaced node would stay draining all day (upstream's semantics; docs/day-in-the-life.md).
  const pinned = new Set(
    [...deps.recorder.pods.values()]
      .filter((p) => deps.doNotDisrupt.has(p.metadata.labels?.app ?? '') && !p.metadata.deletionTimestamp)
      .map((p) => p.spec?.nodeName),
  );
  const chosen = healthyClaims(deps, pool)
    .filter((c) => !pinned.has(c.node))
    .sort((a, b) => b.pods.length - a.pods.length || a.node.localeCompare(b.node))[0];
  if (!chosen) return { notPlayed: `the ${entry.pool} pool had no healthy node`, endedAt: Date.now() };
  const { claim, node, pods } = chosen;
  const name = claim.metadata.name;
  const stoppedAt = Date.now();
  deps.stack.simulator.stopKubelet(node, { survivesReboot: entry.survivesReboot });
  deps.onBrokenNode(node, stoppedAt);
  deps.note(`kubelet stopped on ${node} (${pods.length} pods of the day)`);

  let notReadyAt: number | undefined;
  let markedAt: number | undefined;
  let reboots = 0;
  let readyAgainAt: number | undefined;
  let goneAt: number | undefined;
  let replacement: { name: string; initializedAt?: number } | undefined;
  while (Date.now() < deps.until) {
    const now = Date.now();
    const current = deps.recorder.nodeClaims.get(name);
    const ready = deps.recorder.nodes.get(node)?.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    if (ready !== undefined && ready !== 'True') notReadyAt ??= now;
    if (current && disruptionReasonOf(current) === 'Unhealthy') markedAt ??= now;
    reboots = Math.max(reboots, Number(current?.metadata.annotations?.[REBOOTS_ANNOTATION] ?? '0') || 0);
    if (!current) goneAt ??= now;
    const next = replacementOf(deps, name);
    if (next) {
      replacement ??= { name: next.metadata.name };
      if (initialized(next)) replacement.initializedAt ??= now;
    }
    // Repaired in place: Ready again after a reboot, and the mark lifted.
    if (current && reboots > 0 && ready === 'True' && disruptionReasonOf(current) === undefined) {
      readyAgainAt = now;
      break;
    }
    if (goneAt !== undefined && replacement?.initializedAt !== undefined) break;
    await sleep(250);
  }
  const onIt = podsOn(deps, node).filter((p) => pods.includes(p));
  const steps = [
    `${node} (${pods.length} pods) NotReady after ${seconds(stoppedAt, notReadyAt)}`,
    markedAt !== undefined
      ? `marked Unhealthy after ${seconds(stoppedAt, markedAt)}`
      : 'never marked Unhealthy',
    `${reboots} reboot(s)`,
  ];
  let outcome: string;
  if (readyAgainAt !== undefined) {
    outcome = `${steps.join(', ')}; Ready again after ${seconds(stoppedAt, readyAgainAt)}, ${onIt.length} of its pods still on it: repaired by a reboot`;
  } else if (goneAt !== undefined) {
    outcome =
      `${steps.join(', ')}; replaced by ${replacement?.name ?? 'no replacement'}` +
      (replacement?.initializedAt !== undefined
        ? ` (Initialized after ${seconds(stoppedAt, replacement.initializedAt)})`
        : ' (not Initialized by the end of the day)') +
      `, the node gone after ${seconds(stoppedAt, goneAt)}`;
  } else {
    outcome = `${steps.join(', ')}; neither Ready again nor replaced by the end of the day`;
  }
  deps.note(`node NotReady: ${outcome}`);
  return { outcome, endedAt: Date.now() };
}

/**
 * Waits until the pool has a spot node (within the entry's hours), preempts its VM with Azure's notice
 * scaled to the stack's speed, and watches the replacement come and the node go.
 */
export async function playSpotPreemption(
  entry: Extract<WeatherEntry, { kind: 'spotPreemption' }>,
  deps: RepairWeatherDependencies & { lastChance: number },
): Promise<RepairWeatherResult> {
  const pool = poolObjectName(entry.pool, deps.runId);
  let chosen: ReturnType<typeof healthyClaims>[number] | undefined;
  while (!chosen && Date.now() < deps.lastChance) {
    chosen = healthyClaims(deps, pool)
      .filter((c) => c.claim.metadata.labels?.[WellKnown.capacityTypeLabel] === 'spot')
      .sort((a, b) => b.pods.length - a.pods.length || a.node.localeCompare(b.node))[0];
    if (!chosen) await sleep(250);
  }
  if (!chosen) return { notPlayed: `the ${entry.pool} pool had no spot node in time`, endedAt: Date.now() };
  const { claim, pods } = chosen;
  const name = claim.metadata.name;
  const vmName = parseProviderId(claim.status?.providerID ?? '')?.vmName ?? '';
  const labels = claim.metadata.labels ?? {};
  const offering = `${labels[WellKnown.instanceTypeLabel] ?? '?'} spot in zone ${labels[WellKnown.zoneLabel] ?? '?'}`;
  const controls = deps.stack.emulator.controls;
  let evictedAt: number | undefined;
  let vmGoneAt: number | undefined;
  const unsubscribe = controls.onVmChange((change) => {
    if (change.vm.name !== vmName) return;
    if (change.type === 'evicted') evictedAt ??= Date.now();
    if (change.type === 'deleted') vmGoneAt ??= Date.now();
  });
  const noticeAt = Date.now();
  try {
    const notice = controls.preemptVm(vmName, { noticeMs: deps.stack.timings.repair.preemptionNoticeMs });
    const notBefore = Date.parse(notice.notBefore);
    deps.note(
      `preempted ${vmName} (${offering}, ${pods.length} pods): eviction at +${seconds(noticeAt, notBefore)}`,
    );
    let replacement: { name: string; offering: string; initializedAt?: number } | undefined;
    let goneAt: number | undefined;
    while (Date.now() < deps.until) {
      const now = Date.now();
      const next = replacementOf(deps, name);
      if (next) {
        const l = next.metadata.labels ?? {};
        const offeringNow = `${l[WellKnown.instanceTypeLabel] ?? '?'} ${l[WellKnown.capacityTypeLabel] ?? '?'} in zone ${l[WellKnown.zoneLabel] ?? '?'}`;
        replacement ??= { name: next.metadata.name, offering: offeringNow };
        // A replacement is first seen before its launch has written the offering's labels.
        if (l[WellKnown.instanceTypeLabel] !== undefined) replacement.offering = offeringNow;
        if (initialized(next)) replacement.initializedAt ??= now;
      }
      if (!deps.recorder.nodeClaims.has(name)) goneAt ??= now;
      if (goneAt !== undefined && replacement?.initializedAt !== undefined) break;
      await sleep(250);
    }
    const before = (at: number | undefined) =>
      at === undefined
        ? ''
        : at <= (evictedAt ?? notBefore)
          ? ', before the eviction'
          : ', AFTER the eviction';
    const outcome =
      `${vmName} (${offering}, ${pods.length} pods), notice ${seconds(noticeAt, notBefore)}: ` +
      (replacement
        ? `replacement ${replacement.name} (${replacement.offering}) Initialized after ${seconds(noticeAt, replacement.initializedAt)}${before(replacement.initializedAt)}`
        : 'no replacement') +
      (goneAt !== undefined
        ? `; the NodeClaim gone after ${seconds(noticeAt, goneAt)}${before(goneAt)}; `
        : '; the NodeClaim still there when the entry ended (the end state judges it); ') +
      (evictedAt !== undefined
        ? `Azure evicted the VM after ${seconds(noticeAt, evictedAt)}`
        : vmGoneAt !== undefined
          ? 'the VM was deleted by termination before Azure evicted it'
          : 'the VM was still there at the end of the day');
    deps.note(`spot preemption: ${outcome}`);
    return { outcome, endedAt: Date.now() };
  } finally {
    unsubscribe();
  }
}
