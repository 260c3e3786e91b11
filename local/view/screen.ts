// One screen of the live view: NodeClaims with their conditions, Nodes with their taints, VMs with their
// provisioning state, the disruption budget in use per NodePool, and the scenario's pods. Pure: the same
// state always renders the same text.
import { allowedDisruptions, type BudgetNode } from '../../shared/decisions/budgets.js';
import { findCondition } from '../../shared/decisions/conditions.js';
import {
  ConditionTypes,
  WellKnown,
  type Node,
  type NodeClaim,
  type NodePool,
} from '../../shared/models/index.js';
import type { EmulatedVm } from '../arm-emulator/index.js';
import { nodeClaimPhase } from './phases.js';
import type { PodView } from './recorder.js';

export interface ScreenState {
  title: string;
  elapsedMs: number;
  nodeClaims: readonly NodeClaim[];
  nodes: readonly Node[];
  vms: readonly EmulatedVm[];
  nodePools: readonly NodePool[];
  pods: readonly PodView[];
  notes: readonly string[];
  now: Date;
}

const conditionTypes = [
  ConditionTypes.launched,
  ConditionTypes.registered,
  ConditionTypes.initialized,
  ConditionTypes.drifted,
] as const;

export function renderScreen(state: ScreenState, maxRows = 14): string {
  const lines: string[] = [];
  lines.push(`${state.title}   t=${(state.elapsedMs / 1000).toFixed(1)} s`);
  lines.push('');

  lines.push(`NodeClaims (${state.nodeClaims.length})`);
  lines.push(
    row(
      ['NAME', 'PHASE', 'OFFERING', 'Launched', 'Registered', 'Initialized', 'Drifted', 'REASON'],
      nodeClaimWidths,
    ),
  );
  for (const nodeClaim of sorted(state.nodeClaims).slice(0, maxRows)) {
    const conditions = nodeClaim.status?.conditions;
    const marks = conditionTypes.map((type) => mark(findCondition(conditions, type)?.status));
    const launched = findCondition(conditions, ConditionTypes.launched);
    const labels = nodeClaim.metadata.labels ?? {};
    const offering = labels[WellKnown.instanceTypeLabel]
      ? `${labels[WellKnown.instanceTypeLabel]} ${labels[WellKnown.zoneLabel] ?? ''}`
      : '';
    lines.push(
      row(
        [
          nodeClaim.metadata.name,
          nodeClaimPhase(nodeClaim),
          offering,
          ...marks,
          launched?.status === 'False' ? launched.reason : '',
        ],
        nodeClaimWidths,
      ),
    );
  }
  more(lines, state.nodeClaims.length, maxRows);
  lines.push('');

  lines.push(`Nodes (${state.nodes.length})`);
  lines.push(row(['NAME', 'READY', 'REGISTERED', 'TAINTS'], nodeWidths));
  for (const node of sorted(state.nodes).slice(0, maxRows)) {
    const ready = node.status?.conditions?.find((c) => c.type === 'Ready')?.status;
    const taints = (node.spec.taints ?? []).map((t) => `${shortKey(t.key)}:${t.effect}`).join(' ');
    lines.push(
      row(
        [
          node.metadata.name,
          ready ?? '?',
          node.metadata.labels?.[WellKnown.registeredLabel] ?? '-',
          taints || '(none)',
        ],
        nodeWidths,
      ),
    );
  }
  more(lines, state.nodes.length, maxRows);
  lines.push('');

  lines.push(`VMs in the ARM emulator (${state.vms.length})`);
  lines.push(row(['NAME', 'STATE', 'SIZE', 'ZONE', 'ERROR'], vmWidths));
  for (const vm of [...state.vms].sort((a, b) => a.name.localeCompare(b.name)).slice(0, maxRows)) {
    lines.push(
      row([vm.name, vm.provisioningState, vm.vmSize, vm.zones.join(','), vm.failure?.code ?? ''], vmWidths),
    );
  }
  more(lines, state.vms.length, maxRows);

  if (state.nodePools.length > 0) {
    lines.push('');
    lines.push('Disruption budgets in use');
    for (const nodePool of state.nodePools) lines.push(`  ${budgetLine(nodePool, state)}`);
  }

  if (state.pods.length > 0) {
    const bound = state.pods.filter((pod) => pod.spec?.nodeName).length;
    lines.push('');
    lines.push(`Workload pods: ${state.pods.length} created, ${bound} bound to a Node`);
  }
  if (state.notes.length > 0) {
    lines.push('');
    for (const note of state.notes.slice(-6)) lines.push(note);
  }
  return lines.join('\n');
}

/**
 * "general-purpose: 2 disrupting (Underutilized 2); more allowed: Drifted 3, Empty 3, Underutilized 3
 * (10 initialized)": what is disrupting and why (the DisruptionReason mark), and what each reason's budget
 * still allows.
 */
export function budgetLine(
  nodePool: NodePool,
  state: Pick<ScreenState, 'nodeClaims' | 'nodes' | 'now'>,
): string {
  const name = nodePool.metadata.name;
  const nodeByName = new Map(state.nodes.map((node) => [node.metadata.name, node]));
  const budgetNodes: BudgetNode[] = state.nodeClaims
    .filter((nodeClaim) => nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel] === name)
    .map((nodeClaim) => {
      const node = nodeClaim.status?.nodeName ? nodeByName.get(nodeClaim.status.nodeName) : undefined;
      const notReady =
        node !== undefined && node.status?.conditions?.find((c) => c.type === 'Ready')?.status !== 'True';
      const tainted = (node?.spec.taints ?? []).some((t) => t.key === WellKnown.disruptedTaintKey);
      return {
        name: nodeClaim.metadata.name,
        managed: true,
        initialized:
          findCondition(nodeClaim.status?.conditions, ConditionTypes.initialized)?.status === 'True',
        disrupting:
          Boolean(nodeClaim.metadata.deletionTimestamp) ||
          notReady ||
          tainted ||
          findCondition(nodeClaim.status?.conditions, ConditionTypes.disruptionReason)?.status === 'True',
      };
    });
  const why = new Map<string, number>();
  for (const nodeClaim of state.nodeClaims) {
    if (nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel] !== name) continue;
    const mark = findCondition(nodeClaim.status?.conditions, ConditionTypes.disruptionReason);
    if (mark?.status === 'True') why.set(mark.reason ?? '?', (why.get(mark.reason ?? '?') ?? 0) + 1);
  }
  const reasons = (['Drifted', 'Empty', 'Underutilized'] as const).map((reason) => ({
    reason,
    budget: allowedDisruptions(nodePool, reason, budgetNodes, state.now),
  }));
  const first = reasons[0]?.budget;
  const marked = [...why].map(([reason, count]) => `${reason} ${count}`).join(', ');
  const allowed = reasons.map(({ reason, budget }) => `${reason} ${budget.allowed}`).join(', ');
  return `${name}: ${first?.disrupting ?? 0} disrupting${marked ? ` (${marked})` : ''}; more allowed: ${allowed} (${first?.total ?? 0} initialized)`;
}

const nodeClaimWidths = [30, 12, 24, 9, 11, 12, 8, 28];
const nodeWidths = [34, 6, 11, 60];
const vmWidths = [34, 10, 18, 5, 28];

function row(cells: readonly string[], widths: readonly number[]): string {
  return cells
    .map((cell, index) => pad(cell, widths[index] ?? 10))
    .join(' ')
    .trimEnd();
}

function pad(text: string, width: number): string {
  if (text.length > width) return `${text.slice(0, width - 1)}…`;
  return text.padEnd(width);
}

function mark(status: string | undefined): string {
  if (status === 'True') return 'True';
  if (status === 'False') return 'False';
  if (status === 'Unknown') return 'Unknown';
  return '-';
}

function shortKey(key: string): string {
  return key.replace(/^node\.kubernetes\.io\//, '').replace(/^node\.cilium\.io\//, 'cilium/');
}

function sorted<T extends { metadata: { name: string } }>(items: readonly T[]): T[] {
  return [...items].sort((a, b) => a.metadata.name.localeCompare(b.metadata.name));
}

function more(lines: string[], total: number, shown: number): void {
  if (total > shown) lines.push(`  … and ${total - shown} more`);
}
