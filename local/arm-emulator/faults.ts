// Injectable faults: rules that match a VM launch (by name pattern, size, zone, priority, region)
// or a request kind, and fire once, N times, or until cleared. The registry also remembers when each
// rule was added and removed, because estimates derived from the faults (spot placement scores) see
// the world as it stood a while ago, not as it is now.

import { randomUUID } from 'node:crypto';
import type { AllocationFailureCode } from './azure-messages.js';
import type { RequestKind } from './throttling.js';
import type { VmPriority } from './vm-spec.js';

/** Errors answered synchronously on the PUT (the VM is not created). */
export type SyncFaultEffect =
  | { type: 'familyQuota'; family?: string; currentLimit?: number; currentUsage?: number }
  | { type: 'regionalQuota'; currentLimit?: number; currentUsage?: number }
  | { type: 'lowPriorityQuota'; currentLimit?: number; currentUsage?: number }
  | { type: 'skuNotAvailable' }
  | { type: 'syncError'; status: number; code: string; message: string };

/** Errors that end the creation LRO as Failed (the PUT is accepted with 201). */
export type AsyncFaultEffect =
  { type: AllocationFailureCode } | { type: 'asyncError'; code: string; message: string };

/** 429 for the next matching requests, regardless of the token buckets. */
export interface ThrottleFaultEffect {
  type: 'throttle';
  requestKind: RequestKind | 'any';
  retryAfterSeconds?: number;
}

/**
 * The answer to the next matching requests is withheld: for `seconds`, or (without it) until the client
 * gives up and closes the connection. The request itself takes effect first, as when ARM accepted a PUT
 * but the answer was lost on the way; with `processed: false` it never reaches the resource provider.
 */
export interface HangFaultEffect {
  type: 'hang';
  requestKind: RequestKind | 'any';
  seconds?: number;
  processed?: boolean;
}

/**
 * The next matching requests fail with this error instead of reaching the resource provider (nothing
 * changes): a 500 or 503 from ARM or the provider, for callers that must cope with an API being down.
 */
export interface RequestErrorFaultEffect {
  type: 'requestError';
  requestKind: RequestKind | 'any';
  /** Default 500. */
  status?: number;
  /** Default by status: 500 InternalServerError, 503 ServiceUnavailable, otherwise RequestFailed. */
  code?: string;
  message?: string;
}

export type FaultEffect =
  SyncFaultEffect | AsyncFaultEffect | ThrottleFaultEffect | HangFaultEffect | RequestErrorFaultEffect;

/** Request-kind effects: they match a request by its kind (and VM name), not a launch. */
const requestEffectTypes = new Set<string>(['throttle', 'hang', 'requestError']);

export interface FaultMatch {
  /** Glob on the VM name: `*` matches any run of characters, `?` one character. Case-insensitive. */
  vmName?: string;
  vmSize?: string;
  zone?: string;
  /** Capacity type as Azure names it: Regular (on-demand), Spot, Low. */
  priority?: VmPriority;
  location?: string;
}

export interface FaultRuleInput {
  match?: FaultMatch;
  effect: FaultEffect;
  /** How many times the rule fires; omitted = until cleared. */
  times?: number;
}

export interface FaultRule extends FaultRuleInput {
  id: string;
  /** Times fired so far. */
  hits: number;
}

export interface LaunchFacts {
  vmName: string;
  vmSize: string;
  zone: string | undefined;
  priority: VmPriority;
  location: string;
}

const syncTypes = new Set<string>([
  'familyQuota',
  'regionalQuota',
  'lowPriorityQuota',
  'skuNotAvailable',
  'syncError',
]);
const asyncTypes = new Set<string>([
  'AllocationFailed',
  'ZonalAllocationFailed',
  'OverconstrainedAllocationRequest',
  'OverconstrainedZonalAllocationRequest',
  'asyncError',
]);

export function isSyncEffect(effect: FaultEffect): effect is SyncFaultEffect {
  return syncTypes.has(effect.type);
}

export function isAsyncEffect(effect: FaultEffect): effect is AsyncFaultEffect {
  return asyncTypes.has(effect.type);
}

export function globToRegExp(glob: string): RegExp {
  const escaped = glob
    .replace(/[.+^${}()|[\]\\]/g, '\\$&')
    .replace(/\*/g, '.*')
    .replace(/\?/g, '.');
  return new RegExp(`^${escaped}$`, 'i');
}

function matchesRequest(rule: FaultRule, kind: RequestKind, vmName: string | undefined): boolean {
  const effect = rule.effect;
  if (effect.type !== 'throttle' && effect.type !== 'hang' && effect.type !== 'requestError') return false;
  if (effect.requestKind !== 'any' && effect.requestKind !== kind) return false;
  if (rule.match?.vmName !== undefined)
    return vmName !== undefined && globToRegExp(rule.match.vmName).test(vmName);
  return true;
}

export function matchesLaunch(match: FaultMatch | undefined, facts: LaunchFacts): boolean {
  if (!match) return true;
  if (match.vmName !== undefined && !globToRegExp(match.vmName).test(facts.vmName)) return false;
  if (match.vmSize !== undefined && match.vmSize.toLowerCase() !== facts.vmSize.toLowerCase()) return false;
  if (match.zone !== undefined && match.zone !== facts.zone) return false;
  if (match.priority !== undefined && match.priority !== facts.priority) return false;
  if (match.location !== undefined && match.location.toLowerCase() !== facts.location.toLowerCase())
    return false;
  return true;
}

/** Checks a rule read from JSON (admin API) and returns the problem, if any. */
export function describeInvalidRule(input: unknown): string | undefined {
  if (typeof input !== 'object' || input === null) return 'a fault rule must be an object';
  const rule = input as Partial<FaultRuleInput>;
  const effect = rule.effect as Partial<FaultEffect> | undefined;
  if (!effect || typeof effect.type !== 'string') return 'effect.type is required';
  if (!requestEffectTypes.has(effect.type) && !syncTypes.has(effect.type) && !asyncTypes.has(effect.type)) {
    return `unknown effect.type '${effect.type}'`;
  }
  if (
    requestEffectTypes.has(effect.type) &&
    typeof (effect as Partial<ThrottleFaultEffect | HangFaultEffect | RequestErrorFaultEffect>)
      .requestKind !== 'string'
  ) {
    return `a ${effect.type} effect needs requestKind`;
  }
  if (effect.type === 'requestError') {
    const status = (effect as Partial<RequestErrorFaultEffect>).status;
    if (status !== undefined && (!Number.isInteger(status) || status < 400 || status > 599)) {
      return "a requestError effect's status must be an HTTP error status (400-599)";
    }
  }
  if (effect.type === 'hang') {
    const seconds = (effect as Partial<HangFaultEffect>).seconds;
    if (seconds !== undefined && (typeof seconds !== 'number' || !(seconds >= 0))) {
      return "a hang effect's seconds must be a number of seconds, 0 or more";
    }
  }
  if (rule.times !== undefined && (!Number.isInteger(rule.times) || rule.times < 1)) {
    return 'times must be a positive integer';
  }
  return undefined;
}

interface RuleHistoryEntry {
  rule: FaultRule;
  addedAt: number;
  removedAt: number | undefined;
}

/** Removed rules remembered for `activeAt`; past this many the oldest are forgotten. */
const maxRemovedInHistory = 10_000;

export class FaultRegistry {
  private rules: FaultRule[] = [];
  private history: RuleHistoryEntry[] = [];

  constructor(private readonly now: () => number = Date.now) {}

  add(input: FaultRuleInput): FaultRule {
    const rule: FaultRule = { ...input, id: randomUUID(), hits: 0 };
    this.rules.push(rule);
    this.history.push({ rule, addedAt: this.now(), removedAt: undefined });
    return rule;
  }

  remove(id: string): boolean {
    const before = this.rules.length;
    this.rules = this.rules.filter((r) => r.id !== id);
    if (this.rules.length === before) return false;
    this.markRemoved((entry) => entry.rule.id === id);
    return true;
  }

  /** Removes every rule; the history still knows them (for `activeAt`). */
  clear(): void {
    this.rules = [];
    this.markRemoved(() => true);
  }

  /** Removes every rule and forgets that there ever were any (the emulator's reset). */
  forget(): void {
    this.rules = [];
    this.history = [];
  }

  /** The rules that were in force at `time` (ms since the epoch), in the order they were added. */
  activeAt(time: number): FaultRule[] {
    return this.history
      .filter((entry) => entry.addedAt <= time && (entry.removedAt === undefined || entry.removedAt > time))
      .map((entry) => ({ ...entry.rule }));
  }

  list(): FaultRule[] {
    return this.rules.map((r) => ({ ...r }));
  }

  /** The first active sync fault matching the launch, consumed. */
  takeSync(facts: LaunchFacts): SyncFaultEffect | undefined {
    return this.take((r) => isSyncEffect(r.effect) && matchesLaunch(r.match, facts))?.effect as
      SyncFaultEffect | undefined;
  }

  /** The first active async fault matching the launch, consumed. */
  takeAsync(facts: LaunchFacts): AsyncFaultEffect | undefined {
    return this.take((r) => isAsyncEffect(r.effect) && matchesLaunch(r.match, facts))?.effect as
      AsyncFaultEffect | undefined;
  }

  /** Retry-After seconds if a throttle fault applies to this request, consumed. */
  takeThrottle(kind: RequestKind, vmName: string | undefined): number | undefined {
    const rule = this.take((r) => r.effect.type === 'throttle' && matchesRequest(r, kind, vmName));
    if (!rule || rule.effect.type !== 'throttle') return undefined;
    return rule.effect.retryAfterSeconds ?? 1;
  }

  /** The hang fault that applies to this request, if any, consumed. */
  takeHang(kind: RequestKind, vmName: string | undefined): HangFaultEffect | undefined {
    const rule = this.take((r) => r.effect.type === 'hang' && matchesRequest(r, kind, vmName));
    return rule?.effect.type === 'hang' ? rule.effect : undefined;
  }

  /** The request-error fault that applies to this request, if any, consumed. */
  takeRequestError(kind: RequestKind, vmName: string | undefined): RequestErrorFaultEffect | undefined {
    const rule = this.take((r) => r.effect.type === 'requestError' && matchesRequest(r, kind, vmName));
    return rule?.effect.type === 'requestError' ? rule.effect : undefined;
  }

  private markRemoved(predicate: (entry: RuleHistoryEntry) => boolean): void {
    const now = this.now();
    for (const entry of this.history) {
      if (entry.removedAt === undefined && predicate(entry)) entry.removedAt = now;
    }
    const removed = this.history.filter((entry) => entry.removedAt !== undefined).length;
    if (removed > maxRemovedInHistory) {
      let excess = removed - maxRemovedInHistory;
      this.history = this.history.filter((entry) => {
        if (excess > 0 && entry.removedAt !== undefined) {
          excess -= 1;
          return false;
        }
        return true;
      });
    }
  }

  private take(predicate: (rule: FaultRule) => boolean): FaultRule | undefined {
    const rule = this.rules.find(predicate);
    if (!rule) return undefined;
    rule.hits += 1;
    if (rule.times !== undefined && rule.hits >= rule.times) this.remove(rule.id);
    return rule;
  }
}
