// Disruption budgets: how many more nodes of a NodePool may start being disrupted right now.
// Mirrors upstream Karpenter's semantics (docs/design.md; parity and edges in shared/lifecycle/disruption/README.md). An invalid budget
// that got past the API server never throws: it allows 0 for the reasons it covers and comes back
// as an error naming the field, so the sweep can report it on the NodePool and carry on.
import type { Budget, DisruptionReason, NodePool } from '../models/karpenter.js';
import { CronParseError, isScheduleActive, parseCron, type CronSchedule } from './cron.js';
import { DurationParseError, parseFiniteDuration } from './duration.js';

export interface BudgetNode {
  name: string;
  /** Initialized=True on the NodeClaim. Only managed, initialized nodes count toward the total. */
  initialized: boolean;
  /** Owned by this NodePool. */
  managed: boolean;
  /** NotReady, deleting, tainted karpenter.sh/disrupted, or with a replacement in flight. */
  disrupting: boolean;
}

export interface BudgetError {
  budgetIndex: number;
  /** JSON path of the offending field, e.g. "spec.disruption.budgets[1].schedule". */
  field: string;
  /** Full sentence starting with the field, fit for a condition message or an event. */
  message: string;
}

export interface AllowedDisruptions {
  /** How many more nodes may start being disrupted for this reason now (never negative). */
  allowed: number;
  /** Managed, initialized nodes: the base for percentages. */
  total: number;
  /** Managed, initialized nodes already disrupting; already subtracted from `allowed`. */
  disrupting: number;
  /** Index in spec.disruption.budgets of the budget that set the limit; absent when none did. */
  limitingBudget?: number;
  /** True when the NodePool declares no budgets and the default applies. */
  usingDefaultBudget: boolean;
  /** Every invalid budget on the NodePool, whether or not it applies to this reason. */
  errors: BudgetError[];
}

const DEFAULT_BUDGET: Readonly<Budget> = { nodes: '10%' };

const DISRUPTION_REASONS: readonly DisruptionReason[] = ['Drifted', 'Underutilized', 'Empty'];

const COUNT = /^\d+$/;
const PERCENT = /^(\d+)%$/;

type NodesValue = { kind: 'count'; count: number } | { kind: 'percent'; percent: number };

interface CheckedBudget {
  nodes?: NodesValue;
  /** Undefined when the budget is always active. */
  window?: { schedule: CronSchedule; durationMs: number };
  /** True when any field is unusable: the NodePool's budgets then allow nothing, for any reason. */
  invalid: boolean;
  errors: BudgetError[];
}

function fieldPath(index: number, field: string): string {
  return `spec.disruption.budgets[${index}].${field}`;
}

function budgetError(index: number, field: string, detail: string): BudgetError {
  const path = fieldPath(index, field);
  return { budgetIndex: index, field: path, message: `${path}: ${detail}` };
}

function parseNodes(text: string): NodesValue | undefined {
  // Upstream holds a count in an int32 (intstr.FromInt32): a count past 2147483647 wraps, to a negative
  // limit when it lands there, which allows nothing.
  if (COUNT.test(text)) return { kind: 'count', count: Number(BigInt.asIntN(32, BigInt(text))) };
  const percent = PERCENT.exec(text);
  if (percent) {
    const value = Number(percent[1]);
    return value <= 100 ? { kind: 'percent', percent: value } : undefined;
  }
  return undefined;
}

function checkBudget(budget: Budget, index: number): CheckedBudget {
  const errors: BudgetError[] = [];
  let invalid = false;

  const nodes = typeof budget.nodes === 'string' ? parseNodes(budget.nodes) : undefined;
  if (!nodes) {
    invalid = true;
    errors.push(
      budgetError(
        index,
        'nodes',
        `${JSON.stringify(budget.nodes ?? null)} is not a node count ("5") or a percentage from 0% to 100% ("10%")`,
      ),
    );
  }

  let window: CheckedBudget['window'];
  const hasSchedule = budget.schedule !== undefined;
  const hasDuration = budget.duration !== undefined;
  if (hasSchedule !== hasDuration) {
    invalid = true;
    errors.push(
      hasSchedule
        ? budgetError(index, 'duration', 'is required when schedule is set')
        : budgetError(index, 'schedule', 'is required when duration is set'),
    );
  } else if (budget.schedule !== undefined && budget.duration !== undefined) {
    let schedule: CronSchedule | undefined;
    let durationMs: number | undefined;
    try {
      schedule = parseCron(budget.schedule);
    } catch (e) {
      if (!(e instanceof CronParseError)) throw e;
      invalid = true;
      errors.push(budgetError(index, 'schedule', e.message));
    }
    try {
      durationMs = parseFiniteDuration(budget.duration);
    } catch (e) {
      if (!(e instanceof DurationParseError)) throw e;
      invalid = true;
      errors.push(budgetError(index, 'duration', e.message));
    }
    if (schedule && durationMs !== undefined) window = { schedule, durationMs };
  }

  (budget.reasons ?? []).forEach((reason, j) => {
    // An unknown reason matches nothing, so it cannot loosen any limit; it is reported, not zeroed.
    if (!DISRUPTION_REASONS.includes(reason)) {
      errors.push(
        budgetError(
          index,
          `reasons[${j}]`,
          `${JSON.stringify(reason)} is not one of ${DISRUPTION_REASONS.join(', ')}`,
        ),
      );
    }
  });

  return { ...(nodes ? { nodes } : {}), ...(window ? { window } : {}), invalid, errors };
}

// A budget without reasons covers every reason; one with an empty list covers none, as upstream.
function appliesTo(budget: Budget, reason: DisruptionReason): boolean {
  return !budget.reasons || budget.reasons.includes(reason);
}

function limitOf(nodes: NodesValue, total: number): number {
  // Percentages round up, so "10%" of a 3-node pool still allows one node.
  return nodes.kind === 'count' ? nodes.count : Math.ceil((nodes.percent * total) / 100);
}

// Absent budgets get the CRD's default (10%); an explicit empty list is kept, and bounds nothing.
function declaredBudgets(nodePool: NodePool): Budget[] | undefined {
  return nodePool.spec.disruption?.budgets;
}

/** Problems with the NodePool's budgets, for a condition and an event on the NodePool. */
export function validateBudgets(nodePool: NodePool): BudgetError[] {
  return (declaredBudgets(nodePool) ?? []).flatMap((budget, i) => checkBudget(budget, i).errors);
}

/** One line for a condition message or event: every error, each naming its field. */
export function formatBudgetErrors(errors: readonly BudgetError[]): string {
  return errors.map((e) => e.message).join('; ');
}

export function allowedDisruptions(
  nodePool: NodePool,
  reason: DisruptionReason,
  nodes: readonly BudgetNode[],
  now: Date,
): AllowedDisruptions {
  const counted = nodes.filter((n) => n.managed && n.initialized);
  const total = counted.length;
  const disrupting = counted.filter((n) => n.disrupting).length;

  const declared = declaredBudgets(nodePool);
  const budgets = declared ?? [DEFAULT_BUDGET];
  const checked = budgets.map((budget, index) => checkBudget(budget, index));
  const errors = checked.flatMap((c) => c.errors);
  // An inactive or non-applying budget is unbounded; nothing can disrupt more than the whole pool.
  let limit = total;
  let limitingBudget: number | undefined;

  // Upstream collects every budget's error before it looks at reasons, and an error allows nothing: an
  // unusable budget stops disruption for every reason, not only the ones it names.
  const firstUnusable = checked.findIndex((c) => c.invalid);
  if (firstUnusable >= 0) {
    limit = 0;
    limitingBudget = declared ? firstUnusable : undefined;
  } else {
    checked.forEach((check, index) => {
      if (!appliesTo(budgets[index] as Budget, reason)) return;
      let budgetLimit: number;
      if (!check.nodes) {
        budgetLimit = 0;
      } else if (check.window && !isScheduleActive(check.window.schedule, check.window.durationMs, now)) {
        return;
      } else {
        budgetLimit = limitOf(check.nodes, total);
      }
      if (budgetLimit < limit || (budgetLimit === limit && limitingBudget === undefined)) {
        limit = budgetLimit;
        limitingBudget = declared ? index : undefined;
      }
    });
  }
  return {
    allowed: Math.max(0, limit - disrupting),
    total,
    disrupting,
    ...(limitingBudget !== undefined ? { limitingBudget } : {}),
    usingDefaultBudget: declared === undefined,
    errors,
  };
}
