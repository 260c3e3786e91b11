// Which nodes of a NodePool consolidation may consider now, and why each other node is not one. Upstream
// Karpenter's NewCandidate / ValidateNodeDisruptable / ValidatePodsDisruptable, over plain data:
// - ineligible (no event: the node is simply not in a state to judge): not initialized, no Node yet,
//   already disrupting (deleting, marked, tainted karpenter.sh/disrupted, NotReady);
// - waiting: consolidateAfter has not passed since the last pod event (or since initialization);
// - blocked (a DisruptionBlocked event tells the user what holds it): nominated for a pending pod,
//   karpenter.sh/do-not-disrupt on the Node, the NodeClaim or one of its pods, a pod whose PDB allows
//   no eviction now or that more than one PDB covers;
// - candidate: with its reschedulable pods; empty when none of them adds to its disruption cost.
import { WellKnown, type NodeClaim, type NodePool } from '../../models/karpenter.js';
import type { Node } from '../../models/kube.js';
import { nodeDisruptionCost, podEvictionCost } from './balanced.js';
import { pdbBlock, type PdbLimit } from './pdb.js';
import { doNotDisruptBlock, isReschedulable, type ConsolidationPod } from './pods.js';
import { consolidatableAt } from './timing.js';
import type { CandidateCause } from '../explain/decision-record.js';

export interface ConsolidationNodeInput {
  nodeClaim: NodeClaim;
  /** The NodeClaim's Node, once it registered. */
  node?: Node;
  /** Pods bound to the Node. */
  pods: readonly ConsolidationPod[];
  /** Deleting, marked DisruptionReason, tainted karpenter.sh/disrupted, or NotReady. */
  disrupting: boolean;
}

export interface CandidateContext {
  nodePool: NodePool;
  /** PDBs by namespace (pdb.ts indexPdbs). */
  pdbs: ReadonlyMap<string, PdbLimit[]>;
  /** Nodes named by a pending pod's status.nominatedNodeName. */
  nominatedNodes: ReadonlySet<string>;
  now: Date;
}

export type CandidateVerdict =
  | {
      kind: 'candidate';
      name: string;
      input: ConsolidationNodeInput;
      reschedulable: ConsolidationPod[];
      empty: boolean;
      consolidatableSince: Date;
    }
  | { kind: 'waiting'; name: string; until: Date }
  | { kind: 'ineligible'; name: string; why: string }
  | {
      kind: 'blocked';
      name: string;
      input: ConsolidationNodeInput;
      message: string;
      /** What blocks it, as the decision record names it. */
      cause: BlockCause;
    };

/** The causes a DisruptionBlocked event names (decision-record.ts CandidateCause). */
export type BlockCause = Extract<CandidateCause, 'Nominated' | 'DoNotDisrupt' | 'PDB'>;

function doNotDisruptOnNode(input: ConsolidationNodeInput): boolean {
  const key = WellKnown.doNotDisruptAnnotation;
  return (
    input.node?.metadata.annotations?.[key] === 'true' ||
    input.nodeClaim.metadata.annotations?.[key] === 'true'
  );
}

/**
 * upstream's ValidatePodsDisruptable: why the node's pods forbid disrupting it now (a pod do-not-disrupt
 * protects, a PDB that allows no eviction or more than one PDB on a pod), or undefined. Consolidation
 * always obeys it; drift only while the NodeClaim has no terminationGracePeriod to end the wait.
 */
export function podsBlockDisruption(
  pods: readonly ConsolidationPod[],
  pdbs: ReadonlyMap<string, PdbLimit[]>,
  now: Date,
): string | undefined {
  return podsBlockOf(pods, pdbs, now)?.message;
}

/** podsBlockDisruption with its cause: a pod's do-not-disrupt, or a PDB. */
export function podsBlockOf(
  pods: readonly ConsolidationPod[],
  pdbs: ReadonlyMap<string, PdbLimit[]>,
  now: Date,
): { cause: 'DoNotDisrupt' | 'PDB'; message: string } | undefined {
  for (const pod of pods) {
    const why = doNotDisruptBlock(pod, now);
    if (why) return { cause: 'DoNotDisrupt', message: `Pod ${why.slice('pod '.length)}` };
  }
  const pdb = pdbBlock(pods, pdbs, now);
  return pdb ? { cause: 'PDB', message: pdb.charAt(0).toUpperCase() + pdb.slice(1) } : undefined;
}

export function evaluateCandidate(
  input: ConsolidationNodeInput,
  context: CandidateContext,
): CandidateVerdict {
  const name = input.nodeClaim.metadata.name;
  const at = consolidatableAt(input.nodeClaim, context.nodePool);
  if (at === undefined) return { kind: 'ineligible', name, why: 'node is not initialized' };
  if (!input.node) return { kind: 'ineligible', name, why: 'nodeclaim does not have an associated node' };
  if (input.disrupting) return { kind: 'ineligible', name, why: 'node is deleting or marked for deletion' };
  const blocked = (cause: BlockCause, message: string): CandidateVerdict => ({
    kind: 'blocked',
    name,
    input,
    message,
    cause,
  });
  if (context.nominatedNodes.has(input.node.metadata.name)) {
    return blocked('Nominated', 'Node is nominated for a pending pod');
  }
  if (doNotDisruptOnNode(input)) {
    return blocked(
      'DoNotDisrupt',
      `Disruption is blocked through the "${WellKnown.doNotDisruptAnnotation}" annotation`,
    );
  }
  if (at.getTime() > context.now.getTime()) return { kind: 'waiting', name, until: at };
  const podsBlock = podsBlockOf(input.pods, context.pdbs, context.now);
  if (podsBlock) return blocked(podsBlock.cause, podsBlock.message);
  const reschedulable = input.pods.filter(isReschedulable);
  return {
    kind: 'candidate',
    name,
    input,
    reschedulable,
    // upstream's IsEmpty: no pod to move adds to the node's disruption cost, so pods whose eviction cost
    // is 0 or less (a large negative pod-deletion-cost or priority) go with the node as if it were empty.
    empty: nodeDisruptionCost(reschedulable.map(podEvictionCost)) <= 1,
    consolidatableSince: at,
  };
}

export function evaluateCandidates(
  inputs: readonly ConsolidationNodeInput[],
  context: CandidateContext,
): CandidateVerdict[] {
  return inputs.map((input) => evaluateCandidate(input, context));
}

export type Candidate = Extract<CandidateVerdict, { kind: 'candidate' }>;

/**
 * Empty candidates to delete now, at most `allowed` (the Empty budget): longest consolidatable first,
 * the name breaking ties so concurrent runs choose the same nodes.
 */
export function selectEmpty(verdicts: readonly CandidateVerdict[], allowed: number): Candidate[] {
  return verdicts
    .filter((v): v is Candidate => v.kind === 'candidate' && v.empty)
    .sort(
      (a, b) =>
        a.consolidatableSince.getTime() - b.consolidatableSince.getTime() ||
        (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
    )
    .slice(0, Math.max(0, Math.floor(allowed)));
}
