// A consolidation command, one per NodePool at a time (instance `consolidate-<NodePool uid>`): the sweep
// decides it, this orchestration waits the validation delay (upstream: 15 s) on a durable timer, then
// checks it again against fresh state and acts on what still holds. The wait exists for the reason it
// exists upstream: a pod may have just been scheduled onto a node the decision thought empty, or a pending
// pod nominated to it, and the cluster state the sweep read is seconds old. While a command waits, the
// sweep starts no other for that NodePool, as upstream's singleton waits.
import type * as df from 'durable-functions';
import { allowedDisruptions } from '../../decisions/budgets.js';
import { evaluateCandidate, type Candidate } from '../../decisions/consolidation/candidates.js';
import { budgetNodesOf } from '../../decisions/disruption-state.js';
import { isNotFound } from '../../kube/errors.js';
import { toDomainNode } from '../../kube/nodes.js';
import { WellKnown, type DisruptionReason, type NodeClaim } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import type { HandlerContext } from '../../runtime/definitions.js';
import { ConsolidationNames } from '../../runtime/function-names.js';
import type { LifecycleDependencies } from '../dependencies.js';
import { providerIdKey } from '../sweep/snapshot.js';
import { deleteNodeClaim } from '../termination/termination.js';
import { publishTerminating } from './blocked-events.js';
import { nodeInputsOf, readClusterPods } from './cluster-pods.js';
import { taintNodeDisrupted } from '../node-taints.js';
import { markForDisruption } from './replacement.js';

export const consolidationInstanceId = (nodePoolUid: string): string => `consolidate-${nodePoolUid}`;

export interface ConsolidationCommand {
  nodePool: { name: string; uid: string };
  reason: Extract<DisruptionReason, 'Empty' | 'Underutilized'>;
  /** The NodeClaims to delete. */
  candidates: { name: string; uid: string }[];
  decidedAt: string;
  validationSeconds: number;
}

export type ConsolidationOutcome =
  | { outcome: 'Executed'; deleted: string[]; dropped: { name: string; why: string }[] }
  | { outcome: 'Invalid'; why: string };

export function* consolidationOrchestrator(
  context: df.OrchestrationContext,
): Generator<df.Task, ConsolidationOutcome, unknown> {
  const command = context.df.getInput<ConsolidationCommand>();
  const validateAt = Date.parse(command.decidedAt) + command.validationSeconds * 1000;
  if (context.df.currentUtcDateTime.getTime() < validateAt)
    yield context.df.createTimer(new Date(validateAt));
  return (yield context.df.callActivity(ConsolidationNames.execute, command)) as ConsolidationOutcome;
}

interface PoolState {
  nodeClaims: NodeClaim[];
  nodesFor: (nodeClaim: NodeClaim) => Node[];
}

async function readPoolState(deps: LifecycleDependencies, nodePool: string): Promise<PoolState> {
  const selector = `${WellKnown.nodePoolLabel}=${nodePool}`;
  const { core } = await deps.kube();
  const [nodeClaims, nodeList] = await Promise.all([
    deps.objects.nodeClaims.list({ labelSelector: selector }),
    core.listNode({ labelSelector: selector }),
  ]);
  const byProviderId = new Map<string, Node[]>();
  for (const node of nodeList.items.map(toDomainNode)) {
    if (!node.spec.providerID) continue;
    const key = providerIdKey(node.spec.providerID);
    byProviderId.set(key, [...(byProviderId.get(key) ?? []), node]);
  }
  return {
    nodeClaims,
    nodesFor: (c) =>
      c.status?.providerID ? (byProviderId.get(providerIdKey(c.status.providerID)) ?? []) : [],
  };
}

/**
 * Re-validates the command against fresh state and deletes the candidates that are still valid, as many
 * as the budget allows now. Each deleted NodeClaim is marked DisruptionReason=<reason> and its Node tainted
 * first, as upstream, so nothing schedules onto it while termination drains it.
 */
export async function executeConsolidation(
  deps: LifecycleDependencies,
  command: ConsolidationCommand,
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<ConsolidationOutcome> {
  const nodePool = await deps.objects.nodePools.get(command.nodePool.name);
  if (!nodePool || nodePool.metadata.uid !== command.nodePool.uid || nodePool.metadata.deletionTimestamp) {
    return { outcome: 'Invalid', why: `NodePool ${command.nodePool.name} is gone` };
  }
  const [state, pods] = await Promise.all([
    readPoolState(deps, command.nodePool.name),
    readClusterPods(deps),
  ]);
  const now = deps.now();
  const wanted = new Map(command.candidates.map((c) => [c.uid, c.name]));
  const inputs = nodeInputsOf(
    state.nodeClaims.filter((c) => wanted.has(c.metadata.uid ?? '')),
    state.nodesFor,
    pods,
  );
  const candidateContext = { nodePool, pdbs: pods.pdbs, nominatedNodes: pods.nominatedNodes, now };
  const valid: Candidate[] = [];
  const dropped: { name: string; why: string }[] = [];
  for (const input of inputs) {
    const verdict = evaluateCandidate(input, candidateContext);
    if (verdict.kind !== 'candidate') {
      dropped.push({
        name: verdict.name,
        why:
          verdict.kind === 'blocked'
            ? verdict.message
            : verdict.kind === 'waiting'
              ? 'a pod event since the decision'
              : verdict.why,
      });
    } else if (command.reason === 'Empty' && !verdict.empty) {
      dropped.push({ name: verdict.name, why: 'no longer empty' });
    } else valid.push(verdict);
  }
  for (const [uid, name] of wanted) {
    if (!inputs.some((i) => i.nodeClaim.metadata.uid === uid)) dropped.push({ name, why: 'gone' });
  }
  const budget = allowedDisruptions(
    nodePool,
    command.reason,
    budgetNodesOf(state.nodeClaims, state.nodesFor),
    now,
  );
  for (const late of valid.splice(budget.allowed))
    dropped.push({ name: late.name, why: 'the budget no longer allows it' });

  const deleted: string[] = [];
  for (const candidate of valid) {
    if (await disrupt(deps, candidate, command.reason, context)) deleted.push(candidate.name);
  }
  deps.log.info('consolidation executed', {
    nodePool: command.nodePool.name,
    reason: command.reason,
    deleted,
    dropped,
  });
  return { outcome: 'Executed', deleted, dropped };
}

async function disrupt(
  deps: LifecycleDependencies,
  candidate: Candidate,
  reason: ConsolidationCommand['reason'],
  context: Pick<HandlerContext, 'orchestrations'>,
): Promise<boolean> {
  const { nodeClaim, node } = candidate.input;
  const message = reason === 'Empty' ? 'node is empty' : 'node is underutilized';
  const marked = await markForDisruption(deps, nodeClaim, reason, message);
  if (!marked) return false;
  if (node) {
    try {
      await taintNodeDisrupted(deps, node);
    } catch (error) {
      if (!isNotFound(error)) throw error;
    }
  }
  if (!(await deleteNodeClaim(deps, marked, context))) return false;
  await publishTerminating(deps, marked, node ? [node] : [], reason);
  deps.metrics.increment('karpenter_nodeclaims_disrupted_total', {
    nodepool: nodeClaim.metadata.labels?.[WellKnown.nodePoolLabel] ?? '',
    reason: reason.toLowerCase(),
    outcome: 'deleted',
  });
  return true;
}
