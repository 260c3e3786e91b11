// Reboot before replace, and when to give up on the reboot. The repair workflow keeps what it did (the
// reboots it tried and when) in its durable history; these functions turn that record into the next step,
// so a restarted host makes the same decision from the same history and never reboots twice by accident.
import type { RepairAction } from './policies.js';

export interface RebootRecord {
  /** Reboots this repair (and a previous repair of the same NodeClaim) already tried. */
  rebootsTried: number;
  /** When the last reboot's ARM operation finished (RFC 3339), if any. */
  lastRebootAt?: string;
}

export interface EscalationSettings {
  /** Reboots to try before replacing; 0 replaces at once. */
  maxReboots: number;
  /** How long after a reboot the condition has to clear before the node is replaced. */
  recoveryMs: number;
}

export type FirstStep = 'reboot' | 'replace' | 'preempted';

/**
 * What a repair does first: a preemption is replaced at once; a policy that allows a reboot reboots
 * while reboots are left (counting those a previous repair of this NodeClaim tried within the recovery
 * window, so a node that keeps breaking right after its reboot is replaced, not rebooted in a loop).
 */
export function firstStep(
  action: RepairAction,
  previous: RebootRecord,
  settings: EscalationSettings,
  now: Date,
): FirstStep {
  if (action === 'preempted') return 'preempted';
  if (action !== 'reboot') return 'replace';
  return rebootsLeft(previous, settings, now) > 0 ? 'reboot' : 'replace';
}

/** Reboots still allowed: earlier ones count only while their recovery window lasts (twice the bound). */
export function rebootsLeft(previous: RebootRecord, settings: EscalationSettings, now: Date): number {
  const last = Date.parse(previous.lastRebootAt ?? '');
  const recent = Number.isFinite(last) && now.getTime() - last < 2 * settings.recoveryMs;
  return Math.max(0, settings.maxReboots - (recent ? previous.rebootsTried : 0));
}

/**
 * Reboots one repair may still try: what rebootsLeft allowed when it began, less the reboots it tried
 * since. Its own reboots count however late it comes to decide (a host that was down, a slow check);
 * judged by rebootsLeft at that later time, a reboot older than the window would no longer count and
 * the repair would reboot again, once more per outage.
 */
export function rebootsLeftInRepair(
  previous: RebootRecord,
  triedInThisRepair: number,
  settings: EscalationSettings,
  begunAt: Date,
): number {
  return Math.max(0, rebootsLeft(previous, settings, begunAt) - triedInThisRepair);
}

export type AfterReboot = 'recovered' | 'waiting' | 'escalate';

/**
 * After a reboot: recovered once the condition cleared; otherwise wait until the bound, then escalate
 * (another reboot when one is left, else replace; the workflow decides which with rebootsLeft).
 */
export function afterReboot(
  conditionCleared: boolean,
  rebootedAt: Date,
  now: Date,
  settings: EscalationSettings,
): AfterReboot {
  if (conditionCleared) return 'recovered';
  return now.getTime() - rebootedAt.getTime() < settings.recoveryMs ? 'waiting' : 'escalate';
}
