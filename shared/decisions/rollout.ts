// Drift as a rollout: what a NodePool's change rolls out to (its target), the rollout's state as the
// NodePool's annotation keeps it, how many drifted nodes the drift method may start replacing because of
// it (the room), and the state machine the rollout workflow steps through (begin, then one step per
// poll). All of it is a function of plain data, so the room the sweep computes, the check made again at
// the mark and the workflow's decisions agree, and each is table-tested. docs/rollouts.md tells the
// story; the lifecycle side is shared/lifecycle/disruption/rollout/.
//
// The state is the workflow's only memory: every step reads it, decides, and writes the next state with
// a guarded patch, so a host killed at any line resumes from what the annotation says. Waves are
// expressed as a floor, a count of old (drifted, not disrupting) nodes that must remain until the wave
// is done: the room is what is above the floor, which is the same number whoever computes it and
// however often, and survives a restart without counting anything the workflow did.
import { createHash } from 'node:crypto';
import type { AKSNodeClass, RolledBackVersion } from '../models/aks-node-class.js';
import { ConditionTypes, type NodeClaim, type NodePool } from '../models/karpenter.js';
import type { Node } from '../models/kube.js';
import { isConditionTrue } from './conditions.js';
import { isDisrupting } from './disruption-state.js';
import { nodeClassHash, nodePoolTemplateHash } from './hash.js';
import type { RolloutGateFailure } from './rollout-gates.js';

/** The NodePool annotations of a rollout: the app's state, and the user's three switches. */
export const RolloutAnnotations = {
  /** The rollout's state (JSON, RolloutState), written only by the rollout workflow's activities. */
  state: 'karpenter.azure.com/rollout',
  /** "true": no new node starts being replaced, and the workflow waits. */
  paused: 'karpenter.azure.com/rollout-paused',
  /** "<target>": resume a halted rollout of that target (consumed: the app removes it as it resumes). */
  resume: 'karpenter.azure.com/rollout-resume',
  /** "Canary" or "Immediate": this NodePool's policy, over the ROLLOUT_POLICY setting. */
  policy: 'karpenter.azure.com/rollout-policy',
} as const;

/** Canary: a canary, a soak and gates, then waves at the budget. Immediate: the budget alone. */
export const ROLLOUT_POLICIES = ['Canary', 'Immediate'] as const;
export type RolloutPolicy = (typeof ROLLOUT_POLICIES)[number];

export type RolloutPhase = 'canary' | 'waves' | 'rollback' | 'halted' | 'rolledOut' | 'rolledBack';
const PHASES: readonly RolloutPhase[] = ['canary', 'waves', 'rollback', 'halted', 'rolledOut', 'rolledBack'];

/** How a rollout workflow ended; the first three are counted in karpenter_nodepools_rollouts_total. */
export type RolloutOutcome =
  'rolled_out' | 'rolled_back' | 'halted' | 'superseded' | 'nothing_drifted' | 'immediate' | 'gone';

export interface RolloutState {
  /** The target rolled out (RolloutTarget.id). */
  target: string;
  /** The target's spec part (RolloutTarget.spec): what a rollback, whose images change, still matches. */
  spec: string;
  phase: RolloutPhase;
  /** The wave in progress or last done; 1 is the canary. */
  wave: number;
  /** Drifted nodes not disrupting that must remain until this wave is done. */
  floor: number;
  startedAt: string;
  /** The gates judge what happened from here on: the start, or the last resume. */
  gatesFrom: string;
  waveStartedAt: string;
  /** When this wave was first seen done: its soak counts from here. */
  soakingSince?: string;
  /** The gate that failed (halted, rollback, rolledBack). */
  gate?: { name: string; message: string };
  /** The image version a rollback rejected (rollback, rolledBack). */
  rejectedImageVersion?: string;
}

/**
 * What drift compares a NodeClaim against now, as a digest: the NodePool's template hash and its
 * requirements, the AKSNodeClass's hash (the spec part), and the class's effective images and Kubernetes
 * version. A change of any of them is a new rollout.
 */
export interface RolloutTarget {
  id: string;
  spec: string;
}

/** Hex digits of a target: 48 bits tell one NodePool's successive targets apart, and keep IDs short. */
const TARGET_HEX_LENGTH = 12;

function digest(text: string): string {
  return createHash('sha256').update(text).digest('hex').slice(0, TARGET_HEX_LENGTH);
}

// Code-unit order, not locale order: the digest must not depend on the machine computing it.
const byCodeUnit = (a: string, b: string): number => (a < b ? -1 : a > b ? 1 : 0);

export function rolloutTargetOf(nodePool: NodePool, nodeClass: AKSNodeClass | undefined): RolloutTarget {
  // Requirements are not in the template hash (drift checks them against labels instead), but a changed
  // requirement drifts nodes all the same, so it is a change to roll out.
  const requirements = nodePool.spec.template.spec.requirements
    .map((r) =>
      JSON.stringify([r.key, r.operator, [...(r.values ?? [])].sort(byCodeUnit), r.minValues ?? null]),
    )
    .sort(byCodeUnit);
  const spec = digest(
    JSON.stringify({
      nodePool: nodePoolTemplateHash(nodePool),
      requirements,
      nodeClass: nodeClass ? nodeClassHash(nodeClass) : null,
    }),
  );
  const images = (nodeClass?.status?.images ?? []).map((i) => i.id.toLowerCase()).sort(byCodeUnit);
  const kubernetesVersion = nodeClass?.status?.kubernetesVersion ?? null;
  return { id: digest(JSON.stringify({ spec, images, kubernetesVersion })), spec };
}

/** The NodePool's policy: its annotation when that names one, else the setting. */
export function rolloutPolicyOf(nodePool: NodePool, fallback: RolloutPolicy): RolloutPolicy {
  const written = nodePool.metadata.annotations?.[RolloutAnnotations.policy]?.trim();
  return ROLLOUT_POLICIES.find((p) => p.toLowerCase() === written?.toLowerCase()) ?? fallback;
}

/** The policy annotation names no policy (said in the RolledOut condition, which then follows the setting). */
export function invalidRolloutPolicyAnnotation(nodePool: NodePool): string | undefined {
  const written = nodePool.metadata.annotations?.[RolloutAnnotations.policy];
  if (written === undefined) return undefined;
  return ROLLOUT_POLICIES.some((p) => p.toLowerCase() === written.trim().toLowerCase()) ? undefined : written;
}

export function isRolloutPaused(nodePool: NodePool): boolean {
  return nodePool.metadata.annotations?.[RolloutAnnotations.paused]?.trim().toLowerCase() === 'true';
}

function isState(value: unknown): value is RolloutState {
  if (typeof value !== 'object' || value === null) return false;
  const v = value as Record<string, unknown>;
  const text = (key: string) => typeof v[key] === 'string';
  const count = (key: string) => typeof v[key] === 'number' && Number.isInteger(v[key]);
  return (
    text('target') &&
    text('spec') &&
    PHASES.includes(v.phase as RolloutPhase) &&
    count('wave') &&
    count('floor') &&
    text('startedAt') &&
    text('gatesFrom') &&
    text('waveStartedAt')
  );
}

/** The NodePool's rollout state; undefined when there is none or it cannot be read (then it is rewritten). */
export function rolloutStateOf(nodePool: NodePool): RolloutState | undefined {
  const written = nodePool.metadata.annotations?.[RolloutAnnotations.state];
  if (written === undefined) return undefined;
  try {
    const parsed: unknown = JSON.parse(written);
    return isState(parsed) ? parsed : undefined;
  } catch {
    return undefined;
  }
}

export function serializeRolloutState(state: RolloutState): string {
  return JSON.stringify(state);
}

/**
 * Whether the state is the rollout of `target`: the same target, or a rollback of the same spec (the
 * rollback changes the class's effective images, so the target moves under it).
 */
export function stateApplies(state: RolloutState, target: RolloutTarget): boolean {
  return state.target === target.id || (state.phase === 'rollback' && state.spec === target.spec);
}

/** The NodePool's rollout of `target`, if the annotation holds one. */
export function rolloutOf(nodePool: NodePool, target: RolloutTarget): RolloutState | undefined {
  const state = rolloutStateOf(nodePool);
  return state && stateApplies(state, target) ? state : undefined;
}

export const isInProgress = (phase: RolloutPhase): boolean =>
  phase === 'canary' || phase === 'waves' || phase === 'rollback';

export const isDrifted = (nodeClaim: NodeClaim): boolean =>
  isConditionTrue(nodeClaim.status?.conditions, ConditionTypes.drifted);

export interface DriftCounts {
  /** NodeClaims of the pool with Drifted=True (deleting ones included). */
  drifted: number;
  /** Of those, the ones disrupting now (deleting, marked, tainted, NotReady). */
  disrupting: number;
  notDisrupting: number;
}

export function driftCountsOf(
  nodeClaims: readonly NodeClaim[],
  nodesFor: (nodeClaim: NodeClaim) => readonly Node[],
): DriftCounts {
  let drifted = 0;
  let disrupting = 0;
  for (const nodeClaim of nodeClaims) {
    if (!isDrifted(nodeClaim)) continue;
    drifted += 1;
    if (isDisrupting(nodeClaim, nodesFor(nodeClaim))) disrupting += 1;
  }
  return { drifted, disrupting, notDisrupting: drifted - disrupting };
}

export interface RolloutRoomInput {
  nodePool: NodePool;
  target: RolloutTarget;
  counts: DriftCounts;
  /** ROLLOUT_POLICY. */
  defaultPolicy: RolloutPolicy;
}

/**
 * How many more drifted nodes the rollout lets start being replaced now (Infinity: the budget alone
 * decides). The drift method takes min(budget, room); the mark checks it again on a fresh read.
 */
export function rolloutRoom(input: RolloutRoomInput): number {
  const { nodePool, target, counts } = input;
  if (rolloutPolicyOf(nodePool, input.defaultPolicy) === 'Immediate') return Number.POSITIVE_INFINITY;
  if (counts.drifted === 0) return Number.POSITIVE_INFINITY;
  if (isRolloutPaused(nodePool)) return 0;
  const state = rolloutOf(nodePool, target);
  // Drifted nodes and no rollout of this target yet: it must start (and set its canary) first.
  if (!state) return 0;
  switch (state.phase) {
    case 'canary':
    case 'waves':
      return Math.max(0, counts.notDisrupting - state.floor);
    case 'halted':
      return 0;
    case 'rollback':
      // Until the class's effective image falls back (the target moves), the drifted nodes are the old
      // ones, drifted toward the rejected version: replacing them would boot it.
      return state.target === target.id ? 0 : Number.POSITIVE_INFINITY;
    case 'rolledOut':
    case 'rolledBack':
      return Number.POSITIVE_INFINITY;
  }
}

/** ROLLOUT_CANARY: a count of nodes, or a percentage of the pool's drifted nodes (rounded up). */
export type RolloutCount = { count: number } | { percent: number };

export function parseRolloutCount(text: string): RolloutCount | undefined {
  const trimmed = text.trim();
  const percent = /^(\d{1,3})%$/.exec(trimmed);
  if (percent) {
    const value = Number(percent[1]);
    return value >= 1 && value <= 100 ? { percent: value } : undefined;
  }
  if (!/^\d+$/.test(trimmed)) return undefined;
  const count = Number(trimmed);
  return count >= 1 && Number.isSafeInteger(count) ? { count } : undefined;
}

export function formatRolloutCount(count: RolloutCount): string {
  return 'count' in count ? String(count.count) : `${count.percent}%`;
}

/** The canary's size for `drifted` old nodes: at least 1, at most all of them. */
export function canarySize(canary: RolloutCount, drifted: number): number {
  if (drifted <= 0) return 0;
  const wanted = 'count' in canary ? canary.count : Math.ceil((canary.percent * drifted) / 100);
  return Math.min(drifted, Math.max(1, wanted));
}

/** A wave after the canary: what the Drifted budget allows now, at least 1 (the budget still caps the room). */
export function waveSize(allowed: number, drifted: number): number {
  if (drifted <= 0) return 0;
  return Math.min(drifted, Math.max(1, Number.isFinite(allowed) ? allowed : drifted));
}

export type RolloutEventReason =
  'RolloutStarted' | 'RolloutWaveStarted' | 'RolloutSucceeded' | 'RolloutGateFailed' | 'RolloutRolledBack';

export interface RolloutEvent {
  type: 'Normal' | 'Warning';
  reason: RolloutEventReason;
  message: string;
}

/** What one step of the rollout decided: the state to write, what to say, whether it is over. */
export interface RolloutDecision {
  /** The next state, written with a guarded patch; absent: nothing to write. */
  write?: RolloutState;
  /** Remove the resume annotation in the same write (it has been acted on). */
  consumeResume?: true;
  /** After the state's write: record this image version as rolled back on the AKSNodeClass. */
  rejectImageVersion?: { imageVersion: string; reason: string };
  /** The workflow ends with this outcome. */
  ended?: RolloutOutcome;
  events: RolloutEvent[];
  /** Counted in karpenter_nodepools_rollouts_total. */
  finished?: 'rolled_out' | 'rolled_back' | 'halted';
  /** A wave started (karpenter_nodepools_rollout_waves_total). */
  waveStarted?: true;
  /** The gates that failed (karpenter_nodepools_rollout_gate_failures_total, once per gate). */
  failedGates?: string[];
  /** The soak counts again: the gates were not judged for more than UNWATCHED_POLLS polls (logged). */
  soakRestarted?: true;
}

const NOTHING: RolloutDecision = { events: [] };

export interface RolloutStepInput {
  /** The target the workflow rolls out (its input). */
  requested: string;
  /** The NodePool's target now. */
  current: RolloutTarget;
  state: RolloutState | undefined;
  policy: RolloutPolicy;
  paused: boolean;
  /** The resume annotation's value. */
  resume: string | undefined;
  counts: DriftCounts;
  /** What the Drifted budget allows now (the next wave's size). */
  allowed: number;
  now: Date;
}

function waveStarting(
  state: RolloutState,
  counts: DriftCounts,
  size: number,
  now: Date,
  extra: Partial<RolloutState> = {},
): RolloutState {
  const { soakingSince: _soak, gate: _gate, ...rest } = state;
  return {
    ...rest,
    ...extra,
    phase: 'waves',
    wave: state.wave + 1,
    floor: counts.notDisrupting - size,
    waveStartedAt: now.toISOString(),
  };
}

const ended = (outcome: RolloutOutcome): RolloutDecision => ({ events: [], ended: outcome });

function endedPhase(phase: RolloutPhase): RolloutOutcome | undefined {
  if (phase === 'rolledOut') return 'rolled_out';
  if (phase === 'rolledBack') return 'rolled_back';
  if (phase === 'halted') return 'halted';
  return undefined;
}

/**
 * The workflow's first step: start the rollout of `requested` (phase canary, its floor, RolloutStarted),
 * go on with one already under way (a restart), resume a halted one the user asked to resume, or end.
 */
export function beginRollout(input: RolloutStepInput & { canary: RolloutCount }): RolloutDecision {
  const { current, state, counts, now } = input;
  if (input.policy === 'Immediate') return ended('immediate');
  if (input.requested !== current.id) return ended('superseded');
  if (state && stateApplies(state, current)) {
    if (state.phase === 'halted' && input.resume?.trim() === state.target) {
      const size = waveSize(input.allowed, counts.notDisrupting);
      return {
        write: waveStarting(state, counts, size, now, { gatesFrom: now.toISOString() }),
        consumeResume: true,
        waveStarted: true,
        events: [
          {
            type: 'Normal',
            reason: 'RolloutWaveStarted',
            message: `Rollout ${state.target} resumed: wave ${state.wave + 1}, up to ${size} of ${counts.notDisrupting} drifted nodes`,
          },
        ],
      };
    }
    const over = endedPhase(state.phase);
    return over ? ended(over) : NOTHING;
  }
  if (counts.drifted === 0) return ended('nothing_drifted');
  const size = canarySize(input.canary, counts.notDisrupting);
  const at = now.toISOString();
  return {
    write: {
      target: current.id,
      spec: current.spec,
      phase: 'canary',
      wave: 1,
      floor: counts.notDisrupting - size,
      startedAt: at,
      gatesFrom: at,
      waveStartedAt: at,
    },
    waveStarted: true,
    events: [
      {
        type: 'Normal',
        reason: 'RolloutStarted',
        message: `Rolling out ${current.id} to ${counts.drifted} drifted nodes: a canary of ${size}, then waves at the Drifted budget`,
      },
    ],
  };
}

export interface RolloutPollInput extends RolloutStepInput {
  /** The gates that fail now (evaluated only in canary and waves, not while paused). */
  gates: readonly RolloutGateFailure[];
  /** Set when a failed rollout can be rolled back by rejecting an image version (imageRollbackOf). */
  imageRollback: { imageVersion: string } | undefined;
  /** NodeClaims of the pool that still run the rejected image version (rollback). */
  runningRejected: number;
  soakSeconds: number;
  /**
   * How long nobody judged the gates before this poll: the time since the workflow's previous poll was
   * answered, less the poll interval (a host down, an API server away). 0 for the first poll.
   */
  unwatchedSeconds: number;
  /** How often the workflow polls: a gap of more than UNWATCHED_POLLS polls restarts a soak. */
  pollSeconds: number;
}

/**
 * Polls a soak may miss before it counts again from the poll that sees the gap: a soak is time the gates
 * watched the new nodes, not time on a clock, so one that passed while the host was dead or the API
 * server away would let a wave through that nothing judged.
 */
export const UNWATCHED_POLLS = 3;

/** One poll of the workflow: gates, the wave's end and its soak, the next wave, the end. */
export function pollRollout(input: RolloutPollInput): RolloutDecision {
  const { current, state, counts, now } = input;
  if (input.policy === 'Immediate') return ended('immediate');
  if (!state || state.target !== input.requested || !stateApplies(state, current)) return ended('superseded');
  const over = endedPhase(state.phase);
  if (over) return ended(over);
  if (state.phase === 'rollback') {
    if (input.runningRejected > 0) {
      // Asked for again on every poll (written only when missing): a step that stopped between the
      // state's write and the class's, or a class status rewritten without it, keeps the version out.
      const version = state.rejectedImageVersion;
      return version
        ? { events: [], rejectImageVersion: { imageVersion: version, reason: gateReason(state) } }
        : NOTHING;
    }
    return {
      write: { ...state, phase: 'rolledBack', target: current.id, spec: current.spec },
      ended: 'rolled_back',
      finished: 'rolled_back',
      events: [],
    };
  }
  if (input.paused) return NOTHING;
  if (input.gates.length > 0) return gateFailed(state, input);

  const waveDone = counts.disrupting === 0 && counts.notDisrupting <= state.floor;
  if (!waveDone) return NOTHING;
  if (state.soakingSince && input.unwatchedSeconds > UNWATCHED_POLLS * input.pollSeconds) {
    return { write: { ...state, soakingSince: now.toISOString() }, events: [], soakRestarted: true };
  }
  const soakingSince = state.soakingSince ?? now.toISOString();
  if (now.getTime() - Date.parse(soakingSince) < input.soakSeconds * 1000) {
    return state.soakingSince ? NOTHING : { write: { ...state, soakingSince }, events: [] };
  }
  if (counts.drifted === 0) {
    const { soakingSince: _soak, ...rest } = state;
    return {
      write: { ...rest, phase: 'rolledOut' },
      ended: 'rolled_out',
      finished: 'rolled_out',
      events: [
        {
          type: 'Normal',
          reason: 'RolloutSucceeded',
          message: `Rolled out ${state.target} in ${state.wave} waves: every node is up to date`,
        },
      ],
    };
  }
  const size = waveSize(input.allowed, counts.notDisrupting);
  return {
    write: waveStarting(state, counts, size, now),
    waveStarted: true,
    events: [
      {
        type: 'Normal',
        reason: 'RolloutWaveStarted',
        message: `Rollout ${state.target}: wave ${state.wave + 1}, up to ${size} of ${counts.notDisrupting} drifted nodes`,
      },
    ],
  };
}

const gateReason = (state: RolloutState): string =>
  state.gate ? `${state.gate.name}: ${state.gate.message}` : 'a rollout gate failed';

/** Longest gate message kept in the annotation and the condition. */
const GATE_MESSAGE_LIMIT = 900;

function gateFailed(state: RolloutState, input: RolloutPollInput): RolloutDecision {
  const names = [...new Set(input.gates.map((g) => g.gate))];
  const all = input.gates.map((g) => g.message).join('; ');
  const message = all.length > GATE_MESSAGE_LIMIT ? `${all.slice(0, GATE_MESSAGE_LIMIT - 1)}…` : all;
  const gate = { name: names.join(','), message };
  const failed: RolloutEvent = {
    type: 'Warning',
    reason: 'RolloutGateFailed',
    message: `Rollout ${state.target} failed its ${gate.name} gate at wave ${state.wave}: ${message}`,
  };
  const { soakingSince: _soak, ...rest } = state;
  if (input.imageRollback) {
    const version = input.imageRollback.imageVersion;
    return {
      write: { ...rest, phase: 'rollback', gate, rejectedImageVersion: version },
      rejectImageVersion: { imageVersion: version, reason: `${gate.name}: ${message}` },
      failedGates: names,
      events: [
        failed,
        {
          type: 'Warning',
          reason: 'RolloutRolledBack',
          message: `Rolling back node image version ${version}: nodes running it are replaced at the budget`,
        },
      ],
    };
  }
  return {
    write: { ...rest, phase: 'halted', gate },
    ended: 'halted',
    finished: 'halted',
    failedGates: names,
    events: [failed],
  };
}

/**
 * The class's rolledBackVersions with `version` rejected by `nodePool`; undefined when it is listed
 * already (the write is then skipped, so a step run again adds nothing).
 */
export function withRolledBackVersion(
  existing: readonly RolledBackVersion[] | undefined,
  version: RolledBackVersion,
): RolledBackVersion[] | undefined {
  const list = existing ?? [];
  if (list.some((v) => v.imageVersion === version.imageVersion && v.nodePool === version.nodePool)) {
    return undefined;
  }
  return [...list, version];
}

/**
 * The target whose rollout workflow the NodePool needs running now (to start it, resume it, or carry it
 * on after a restart), or undefined when it needs none. A rollback runs under the target it rolled out,
 * which its state keeps while the class's effective image moves back under it.
 */
export function rolloutWorkflowWanted(
  nodePool: NodePool,
  target: RolloutTarget,
  hasDrifted: boolean,
  defaultPolicy: RolloutPolicy,
): string | undefined {
  if (rolloutPolicyOf(nodePool, defaultPolicy) === 'Immediate') return undefined;
  const state = rolloutOf(nodePool, target);
  if (!state) return hasDrifted ? target.id : undefined;
  if (isInProgress(state.phase)) return state.target;
  const resume = nodePool.metadata.annotations?.[RolloutAnnotations.resume]?.trim();
  return state.phase === 'halted' && resume === state.target ? state.target : undefined;
}

/** The rollout workflow's instance ID: one per NodePool and target. */
export function rolloutInstanceId(nodePoolUid: string, target: string): string {
  return `rollout-${nodePoolUid}-${target}`;
}
