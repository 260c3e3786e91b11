// Which Node conditions make a node unhealthy, and since when it may be repaired: the cloud provider's
// repair policies (upstream's RepairPolicy: condition type, status, toleration), the Azure provider's
// set as the default, matched against a Node's conditions with the toleration counted from the
// condition's lastTransitionTime. A policy may also name the condition's reason (upstream's v1.15
// reason-aware matching) and whether a reboot may clear it before the node is replaced.
import type { Node, NodeCondition } from '../../models/kube.js';
import { DurationParseError, parseFiniteDuration } from '../duration.js';

export type RepairAction =
  /** Restart the VM first; replace the node if the condition does not clear within the bound. */
  | 'reboot'
  /** Replace the node (a replacement first, then the old one drained and deleted). */
  | 'replace'
  /** Spot eviction notice: replacement launched at once, the old node drained within the notice. */
  | 'preempted';

export interface RepairPolicy {
  conditionType: string;
  conditionStatus: NodeCondition['status'];
  /** Only a condition with this reason matches; any reason when absent. */
  conditionReason?: string;
  /** How long the condition must have held (since its lastTransitionTime) before repair. */
  tolerationMs: number;
  action: RepairAction;
}

/** The spot eviction notice condition an AKS node agent raises from IMDS Scheduled Events. */
export const PREEMPTION_SCHEDULED = 'PreemptionScheduled';
/** The condition AKS's node problem detection sets when a node is broken beyond kubelet's view. */
export const NODE_HEALTHY = 'kubernetes.azure.com/NodeHealthy';

const TEN_MINUTES = 10 * 60_000;

/**
 * The Azure provider's RepairPolicies (pkg/cloudprovider/cloudprovider.go): Ready False or Unknown for
 * 10 minutes, NodeHealthy=False and PreemptionScheduled=True at once. Which of them may be cleared by a
 * reboot is this app's choice (upstream's reboot is per provider): a wedged kubelet or a broken node
 * often is, a preemption never is.
 */
export const AZURE_REPAIR_POLICIES: readonly RepairPolicy[] = [
  { conditionType: 'Ready', conditionStatus: 'False', tolerationMs: TEN_MINUTES, action: 'reboot' },
  { conditionType: 'Ready', conditionStatus: 'Unknown', tolerationMs: TEN_MINUTES, action: 'reboot' },
  { conditionType: NODE_HEALTHY, conditionStatus: 'False', tolerationMs: 0, action: 'reboot' },
  { conditionType: PREEMPTION_SCHEDULED, conditionStatus: 'True', tolerationMs: 0, action: 'preempted' },
];

/** "Ready=Unknown:10m:reboot", as REPAIR_POLICIES spells a policy (formatRepairPolicy's inverse). */
export function formatRepairPolicy(policy: RepairPolicy): string {
  const reason = policy.conditionReason ? `/${policy.conditionReason}` : '';
  return `${policy.conditionType}=${policy.conditionStatus}${reason}:${formatToleration(policy.tolerationMs)}:${policy.action}`;
}

function formatToleration(ms: number): string {
  if (ms === 0) return '0s';
  if (ms % 3_600_000 === 0) return `${ms / 3_600_000}h`;
  if (ms % 60_000 === 0) return `${ms / 60_000}m`;
  if (ms % 1000 === 0) return `${ms / 1000}s`;
  return `${ms}ms`;
}

const STATUSES: readonly NodeCondition['status'][] = ['True', 'False', 'Unknown'];
const ACTIONS: readonly RepairAction[] = ['reboot', 'replace', 'preempted'];
const ENTRY = /^([^=\s:]+)=([A-Za-z]+)(?:\/([^:\s]+))?:([^:\s]+)(?::([a-z]+))?$/;

/**
 * REPAIR_POLICIES: comma-separated `Type=Status[/Reason]:toleration[:action]` (action reboot, replace or
 * preempted; replace when absent). Returns the policies, or the problems, each naming the entry.
 */
export function parseRepairPolicies(text: string): { policies: RepairPolicy[] } | { problems: string[] } {
  const problems: string[] = [];
  const policies: RepairPolicy[] = [];
  const entries = text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '');
  if (entries.length === 0) return { problems: ['has no policy: expected Type=Status:toleration[:action]'] };
  for (const entry of entries) {
    const match = ENTRY.exec(entry);
    if (!match) {
      problems.push(`has ${JSON.stringify(entry)}: expected Type=Status[/Reason]:toleration[:action]`);
      continue;
    }
    const [, type = '', status = '', reason, toleration = '', action = 'replace'] = match;
    if (!(STATUSES as readonly string[]).includes(status)) {
      problems.push(`has ${JSON.stringify(entry)}: status must be True, False or Unknown`);
      continue;
    }
    if (!(ACTIONS as readonly string[]).includes(action)) {
      problems.push(`has ${JSON.stringify(entry)}: action must be one of ${ACTIONS.join(', ')}`);
      continue;
    }
    let tolerationMs: number;
    try {
      tolerationMs = parseFiniteDuration(toleration);
    } catch (error) {
      if (!(error instanceof DurationParseError)) throw error;
      problems.push(`has ${JSON.stringify(entry)}: ${error.message}`);
      continue;
    }
    policies.push({
      conditionType: type,
      conditionStatus: status as NodeCondition['status'],
      ...(reason ? { conditionReason: reason } : {}),
      tolerationMs,
      action: action as RepairAction,
    });
  }
  return problems.length > 0 ? { problems } : { policies };
}

/** The condition matches the policy's type, status and (when it names one) reason. */
export function conditionMatches(policy: RepairPolicy, condition: NodeCondition | undefined): boolean {
  if (!condition || condition.type !== policy.conditionType) return false;
  if (condition.status !== policy.conditionStatus) return false;
  return policy.conditionReason === undefined || condition.reason === policy.conditionReason;
}

export interface UnhealthyMatch {
  policy: RepairPolicy;
  condition: NodeCondition;
  /** When the toleration ends: the condition's lastTransitionTime plus the policy's toleration. */
  repairableAt: Date;
}

function conditionOf(node: Node, type: string): NodeCondition | undefined {
  return node.status?.conditions?.find((c) => c.type === type);
}

/** Some policy's condition holds on the Node now, toleration or not (what the 20% breaker counts). */
export function isUnhealthy(node: Node, policies: readonly RepairPolicy[]): boolean {
  return policies.some((policy) => conditionMatches(policy, conditionOf(node, policy.conditionType)));
}

/**
 * The policy the Node matches whose toleration ends first, as upstream picks it; undefined when none
 * matches. A condition without a lastTransitionTime counts from `now` (its toleration starts when seen).
 */
export function unhealthyMatch(
  node: Node,
  policies: readonly RepairPolicy[],
  now: Date,
): UnhealthyMatch | undefined {
  let best: UnhealthyMatch | undefined;
  for (const policy of policies) {
    const condition = conditionOf(node, policy.conditionType);
    if (!condition || !conditionMatches(policy, condition)) continue;
    const since = Date.parse(condition.lastTransitionTime ?? '');
    const from = Number.isFinite(since) ? since : now.getTime();
    const repairableAt = new Date(from + policy.tolerationMs);
    if (!best || repairableAt < best.repairableAt) best = { policy, condition, repairableAt };
  }
  return best;
}

/** What events and the DisruptionReason message say about the match: policy and condition. */
export function describeMatch(match: UnhealthyMatch): string {
  const { condition, policy } = match;
  const reason = condition.reason ? ` (${condition.reason})` : '';
  return `${condition.type}=${condition.status}${reason} past its ${formatToleration(policy.tolerationMs)} toleration (repair policy ${formatRepairPolicy(policy)})`;
}

/**
 * Upstream's metric label for a condition: pretty.ToSnakeCase of its type, the same two rewrites
 * ("ready", "preemption_scheduled", "kubernetes.azure.com/_node_healthy").
 */
export function conditionMetricLabel(conditionType: string): string {
  return conditionType
    .replace(/(.)([A-Z][a-z]+)/g, '$1_$2')
    .replace(/([a-z0-9])([A-Z])/g, '$1_$2')
    .toLowerCase();
}
