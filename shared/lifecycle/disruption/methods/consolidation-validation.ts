// Consolidation's validation, upstream's 15 s re-check: the command waited CONSOLIDATION_VALIDATION_SECONDS
// in its workflow, because a pod may have just been scheduled onto a node the decision thought empty, or
// a pending pod nominated to it, and the sweep's read was seconds old. This re-reads the NodePool, its
// NodeClaims and Nodes, the pods and PDBs, and keeps what still holds: Empty keeps the candidates that
// are still empty candidates, within the budget as it is now; Underutilized re-simulates and needs every
// candidate still to qualify and the simulation to say the same (delete, or one cheaper replacement).
// A changed simulation is remembered (command memory) and said once on each candidate.
import { allowedDisruptions } from '../../../decisions/budgets.js';
import { evaluateCandidate, type Candidate } from '../../../decisions/consolidation/candidates.js';
import { activePodsDigest } from '../../../decisions/consolidation/pod-events.js';
import { computeConsolidation } from '../../../decisions/consolidation/underutilized.js';
import { budgetNodesOf } from '../../../decisions/disruption-state.js';
import {
  WellKnown,
  type DisruptionReason,
  type NodeClaim,
  type NodePool,
} from '../../../models/karpenter.js';
import type { LifecycleDependencies } from '../../dependencies.js';
import { SweepView } from '../../cluster/snapshot.js';
import { publishUnconsolidatable } from '../blocked-events.js';
import { readClusterPods, nodeInputsOf, type ClusterPods } from '../cluster-pods.js';
import { rememberFailedConsolidation } from '../command-memory.js';
import { nodeClaimsByPool } from '../scope.js';
import { nodesWithNodeClaims, underutilizedInput } from '../underutilized-input.js';
import type { CommandValidation, DisruptionCommand } from './method.js';

/**
 * Fresh NodeClaims and Nodes, indexed as the sweep's are. Empty needs only the NodePool's own;
 * Underutilized simulates against every node in the cluster, so it reads them all.
 */
async function readFreshView(
  deps: LifecycleDependencies,
  nodePool: NodePool,
  wholeCluster: boolean,
): Promise<SweepView> {
  const readAt = deps.now();
  const poolOnly = { labelSelector: `${WellKnown.nodePoolLabel}=${nodePool.metadata.name}` };
  const [nodeClaims, nodes] = await Promise.all([
    deps.objects.nodeClaims.list(wholeCluster ? {} : poolOnly),
    wholeCluster ? deps.nodes.list() : deps.nodes.listLabelled(poolOnly.labelSelector),
  ]);
  return new SweepView({ readAt, nodeClaims, nodes, nodePools: [nodePool], nodeClasses: [] });
}

interface Revalidated {
  nodePool: NodePool;
  view: SweepView;
  pods: ClusterPods;
  valid: Candidate[];
  dropped: { name: string; why: string }[];
  /** How many the budget for the command's reason allows now, the command's own marks not yet on. */
  allowed: number;
}

/** Each candidate of the command checked again as a candidate (and, for Empty, as empty). */
async function revalidate(
  deps: LifecycleDependencies,
  command: DisruptionCommand,
  reason: DisruptionReason,
): Promise<Revalidated | { invalid: string }> {
  const nodePool = await deps.objects.nodePools.get(command.nodePool.name);
  if (!nodePool || nodePool.metadata.uid !== command.nodePool.uid || nodePool.metadata.deletionTimestamp) {
    return { invalid: `NodePool ${command.nodePool.name} is gone` };
  }
  const [view, pods] = await Promise.all([
    readFreshView(deps, nodePool, reason === 'Underutilized'),
    readClusterPods(deps),
  ]);
  const now = deps.now();
  const poolClaims = nodeClaimsByPool(view.nodeClaims()).get(command.nodePool.name) ?? [];
  const nodesFor = (c: NodeClaim) => view.nodesFor(c);
  const wanted = new Map(command.candidates.map((c) => [c.uid, c.name]));
  const inputs = nodeInputsOf(
    poolClaims.filter((c) => wanted.has(c.metadata.uid ?? '')),
    nodesFor,
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
    } else if (reason === 'Empty' && !verdict.empty) {
      dropped.push({ name: verdict.name, why: 'no longer empty' });
    } else valid.push(verdict);
  }
  for (const [uid, name] of wanted) {
    if (!inputs.some((i) => i.nodeClaim.metadata.uid === uid)) dropped.push({ name, why: 'gone' });
  }
  const budget = allowedDisruptions(nodePool, reason, budgetNodesOf(poolClaims, nodesFor), now);
  return { nodePool, view, pods, valid, dropped, allowed: budget.allowed };
}

const asCandidates = (valid: readonly Candidate[]): DisruptionCommand['candidates'] =>
  valid.map((c) => ({
    name: c.name,
    uid: c.input.nodeClaim.metadata.uid ?? '',
    podsDigest: activePodsDigest(c.input.pods),
  }));

/** Empty: the candidates that are still empty candidates, as many as the budget allows now. */
export async function validateEmpty(
  deps: LifecycleDependencies,
  command: DisruptionCommand,
): Promise<CommandValidation> {
  const fresh = await revalidate(deps, command, 'Empty');
  if ('invalid' in fresh) return fresh;
  for (const late of fresh.valid.splice(fresh.allowed)) {
    fresh.dropped.push({ name: late.name, why: 'the budget no longer allows it' });
  }
  if (fresh.dropped.length > 0) {
    deps.log.info('consolidation candidates dropped at validation', {
      nodePool: command.nodePool.name,
      dropped: fresh.dropped,
    });
  }
  if (fresh.valid.length === 0) return { invalid: 'no candidate still qualifies' };
  return { command: { ...command, candidates: asCandidates(fresh.valid) } };
}

/**
 * Underutilized: every candidate must still qualify and fit the budget, and the simulation from fresh
 * state must still decide the same; the replacement's requirements are the fresh simulation's.
 */
export async function validateUnderutilized(
  deps: LifecycleDependencies,
  command: DisruptionCommand,
): Promise<CommandValidation> {
  const fresh = await revalidate(deps, command, 'Underutilized');
  if ('invalid' in fresh) return fresh;
  const first = fresh.dropped[0];
  if (first) return { invalid: `${first.name}: ${first.why}` };
  if (fresh.valid.length > fresh.allowed) return { invalid: 'the budget no longer allows it' };
  const input = await underutilizedInput(deps, fresh.valid, {
    nodePool: fresh.nodePool,
    nodes: nodesWithNodeClaims(fresh.view),
    pods: fresh.pods,
    allowed: fresh.valid.length,
    spotToSpot: deps.settings.disruption.spotToSpotConsolidation,
  });
  const outcome = computeConsolidation(input.candidates, input, {
    sameTypeMustBeCheaper: fresh.valid.length > 1,
  });
  const wanted = command.replacements.length > 0 ? 'replace' : 'delete';
  if ('none' in outcome) return rejected(deps, command, fresh.valid, outcome.none);
  const decided = outcome.command;
  if (decided.decision !== wanted) {
    return rejected(deps, command, fresh.valid, `the simulation now says ${decided.decision}`);
  }
  const digests = new Map(asCandidates(fresh.valid).map((c) => [c.uid, c.podsDigest]));
  return {
    command: {
      ...command,
      // In the command's order: the replacements' names derive from its first candidate.
      candidates: command.candidates.map((c) => ({ ...c, podsDigest: digests.get(c.uid) })),
      replacements:
        decided.decision === 'replace' ? [{ requirements: decided.replacement.requirements }] : [],
      savings: decided.savings,
    },
  };
}

/**
 * The simulation no longer says what it said: remembered, so the sweep does not decide the same command
 * again before its backoff, and said once on each candidate.
 */
async function rejected(
  deps: LifecycleDependencies,
  command: DisruptionCommand,
  candidates: readonly Candidate[],
  why: string,
): Promise<CommandValidation> {
  if (command.key !== undefined) {
    const held = await rememberFailedConsolidation(deps, command.nodePool.name, { key: command.key, why });
    for (const candidate of candidates) {
      await publishUnconsolidatable(
        deps,
        candidate.input.nodeClaim,
        candidate.input.node,
        `Consolidation failed validation: ${why}${held ? `; not tried again before ${held.until}` : ''}`,
      );
    }
  }
  return { invalid: why };
}
