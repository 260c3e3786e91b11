// No churn loop: a command that failed is not issued again, identical, while nothing it depends on
// changed. Two kinds of command are visible from outside the app. Pure.
//
// - A replacement (drift or consolidation) is the replacement NodeClaim for one old NodeClaim
//   (karpenter.azure.com/replacement-of) with its requirements. It failed when the replacement got
//   Launched=False or went away without Initialized=True. Failing again the same way (same old, same
//   requirements, same reason) with no change to its NodePool or AKSNodeClass in between is the loop:
//   the app learnt nothing from the first failure (its failure memory, its command memory).
//   A consolidation's replacement (its old NodeClaim marked Underutilized) is judged stricter: issued
//   again identical after it failed, with nothing changed, is the loop whatever its outcome, because
//   consolidation decides from the same failure memory launch reads and should not decide it again
//   (the second attempt may be dropped at validation or fail otherwise, as in a day with an outage).
// - A launch is a VM PUT at one placement (size, zone, priority). Once a creation there failed and the
//   app had time to note it (`noticeMs`), a PUT at the same placement before the failure memory for
//   that class of error runs out is a re-issue. A quota failure's memory also ends when a VM of the
//   same quota (family and priority) is deleted: the app forgets quota blocks when cores are freed
//   (docs/offerings.md), so the PUT after such a delete depends on something that changed.
import { findCondition, isConditionTrue } from '../../../../shared/decisions/conditions.js';
import { DisruptionAnnotations, disruptionReasonOf } from '../../../../shared/decisions/disruption-state.js';
import { ConditionTypes, type NodeClaim } from '../../../../shared/models/index.js';
import {
  poolOf,
  result,
  secondsAfter,
  type ArmRequest,
  type DayHistory,
  type InvariantResult,
} from './history.js';

export interface ChurnOptions {
  /** How long after a failed creation the app may still PUT the same placement (it notes the failure). */
  noticeMs: number;
  /** How long the app remembers a failure of each class (allocation, quota), wall time. */
  memoryMs: (errorCode: string) => number;
  origin: number;
}

interface Command {
  key: string;
  old: string;
  pool: string;
  /** The old NodeClaim's DisruptionReason when the replacement was created. */
  why: string | undefined;
  createdAt: number;
  failedAt?: number;
  reason?: string;
}

export function checkChurn(history: DayHistory, options: ChurnOptions): InvariantResult {
  const violations: string[] = [];
  const commands = replacementCommands(history.nodeClaims);
  let failedCommands = 0;
  const byKey = new Map<string, Command[]>();
  for (const command of commands) {
    byKey.set(command.key, [...(byKey.get(command.key) ?? []), command]);
    if (command.failedAt !== undefined) failedCommands += 1;
  }
  for (const attempts of byKey.values()) {
    attempts.sort((a, b) => a.createdAt - b.createdAt);
    attempts.forEach((first, index) => {
      if (first.failedAt === undefined) return;
      const failedAt = first.failedAt;
      const changed = (until: number) =>
        history.poolChanges.some((c) => c.pool === first.pool && c.at > first.createdAt && c.at <= until);
      const consolidation = first.why === 'Underutilized';
      const repeat = attempts
        .slice(index + 1)
        .find(
          (later) =>
            later.createdAt >= failedAt &&
            (consolidation || later.reason === first.reason) &&
            !changed(later.createdAt),
        );
      if (repeat && !violations.some((v) => v.includes(`${first.old} `))) {
        violations.push(
          `${secondsAfter(repeat.createdAt, options.origin)}: the replacement of ${first.old} was issued again ` +
            `with the same requirements ` +
            (consolidation ? `by consolidation (${first.why})` : `and failed again (${first.reason})`) +
            ` after it failed (${first.reason}) ${secondsAfter(failedAt, options.origin)}`,
        );
      }
    });
  }

  // Launches: a PUT at a placement whose creation failed, once the app knew, within the memory.
  const puts = history.armRequests.filter(
    (r) => r.method === 'PUT' && r.kind === 'putVm' && r.placement !== undefined && r.vmName !== undefined,
  );
  const placementOf = new Map(puts.map((r) => [r.vmName ?? '', placementKey(r.placement)]));
  const quotaOf = new Map(puts.map((r) => [r.vmName ?? '', quotaKey(r.placement)]));
  const failedPlacements = [
    ...puts
      .filter((r) => r.status === 409 && r.errorCode !== undefined && isCapacityFailure(r.errorCode))
      .map((r) => ({
        placement: placementKey(r.placement),
        quota: quotaKey(r.placement),
        at: r.at,
        code: r.errorCode ?? '',
      })),
    ...history.vmFailures
      .filter((f) => isCapacityFailure(f.code) && placementOf.has(f.vmName))
      .map((f) => ({
        placement: placementOf.get(f.vmName) ?? '',
        quota: quotaOf.get(f.vmName) ?? '',
        at: f.at,
        code: f.code,
      })),
  ];
  const quotaFreedAt = history.armRequests
    .filter((r) => r.method === 'DELETE' && r.status >= 200 && r.status < 300 && quotaOf.has(r.vmName ?? ''))
    .map((r) => ({ at: r.at, quota: quotaOf.get(r.vmName ?? '') }));
  const memoryEnds = (f: { at: number; code: string; quota: string }): number => {
    const ttlEnd = f.at + options.memoryMs(f.code);
    if (!isQuotaFailure(f.code)) return ttlEnd;
    const freed = quotaFreedAt.find((d) => d.quota === f.quota && d.at > f.at);
    return freed ? Math.min(ttlEnd, freed.at) : ttlEnd;
  };
  let repeatedPuts = 0;
  for (const request of puts) {
    if (request.status < 200 || request.status >= 300) continue;
    const placement = placementKey(request.placement);
    const known = failedPlacements.find(
      (f) => f.placement === placement && request.at >= f.at + options.noticeMs && request.at < memoryEnds(f),
    );
    if (!known) continue;
    repeatedPuts += 1;
    violations.push(
      `${secondsAfter(request.at, options.origin)}: VM ${request.vmName ?? ''} PUT at ${placement}, where a creation ` +
        `failed ${known.code} at ${secondsAfter(known.at, options.origin)}`,
    );
  }
  return result(
    'no failed command re-issued identical while nothing changed (no churn loop)',
    violations,
    `${commands.length} replacement commands, ${failedCommands} failed, ${violations.length - repeatedPuts} repeated; ` +
      `${failedPlacements.length} failed placements, ${repeatedPuts} PUT again within their failure memory`,
  );
}

/** Allocation, quota and SKU failures: the classes the app remembers per placement. */
export function isCapacityFailure(code: string): boolean {
  return /Allocation|Quota|OperationNotAllowed|SkuNotAvailable|Overconstrained/i.test(code);
}

/** Core quota refusals (ARM's QuotaExceeded, or OperationNotAllowed naming a quota). */
function isQuotaFailure(code: string): boolean {
  return /Quota|OperationNotAllowed/i.test(code);
}

/** The quota a VM's cores count against: its size family (the size without its vCPU count) and priority. */
function quotaKey(placement: ArmRequest['placement']): string {
  return placement ? `${placement.vmSize.replace(/\d+/, '')} ${placement.priority}` : '';
}

function placementKey(placement: ArmRequest['placement']): string {
  return placement ? `${placement.vmSize} zone ${placement.zone || '-'} ${placement.priority}` : '';
}

function replacementCommands(versions: DayHistory['nodeClaims']): Command[] {
  const commands = new Map<string, Command>();
  const reasonOf = new Map<string, string | undefined>();
  for (const { object, type, at } of versions) {
    if (type !== 'DELETED') reasonOf.set(object.metadata.name, disruptionReasonOf(object));
    const old = object.metadata.annotations?.[DisruptionAnnotations.replacementOf];
    if (!old) continue;
    const name = object.metadata.name;
    let command = commands.get(name);
    if (!command) {
      command = {
        key: `${old} ${requirementsKey(object)}`,
        old,
        pool: poolOf(object),
        why: reasonOf.get(old),
        createdAt: at,
      };
      commands.set(name, command);
    }
    if (command.failedAt !== undefined) continue;
    const launched = findCondition(object.status?.conditions, ConditionTypes.launched);
    if (launched?.status === 'False') {
      command.failedAt = at;
      command.reason = launched.reason;
    } else if (
      type === 'DELETED' &&
      !isConditionTrue(object.status?.conditions, ConditionTypes.initialized)
    ) {
      command.failedAt = at;
      command.reason = 'deleted before Initialized';
    }
  }
  return [...commands.values()];
}

function requirementsKey(claim: NodeClaim): string {
  return JSON.stringify(
    [...claim.spec.requirements]
      .map((r) => [r.key, r.operator, [...(r.values ?? [])].sort()])
      .sort((a, b) => String(a[0]).localeCompare(String(b[0]))),
  );
}
