// What a disruption method is, and what it hands the one executor. A method (expiration, drift, static
// drift, emptiness, multi- and single-node consolidation, repair) only decides: given one NodePool's state
// in this sweep, which of its NodeClaims to disrupt and with which replacements, within its budget. The
// executor (../executor.ts) does everything else the same way for every method: it starts one durable
// workflow per command, marks the candidates (DisruptionReason=True with the method's reason), taints
// their Nodes karpenter.sh/disrupted:NoSchedule, creates and launches the replacements, waits until they
// are Initialized and deletes the candidates; or rolls back (untaint, unmark, delete replacements that
// never initialized, remember the failure). So a new method is one file that exports a DisruptionMethod
// and one entry in methods.ts: no sweep step, function name, function registration, budget or setting
// to add. A command that needs a workflow of the method's own (repair's reboot: reboot, wait, escalate)
// says so in the command (ownWorkflow); the disruption step starts that workflow in place of the
// executor's, so even then the method only decides and starts nothing.
//
// Modelled on upstream Karpenter's pkg/controllers/disruption/types.go (Method: ShouldDisrupt,
// ComputeCommands within a budget mapping, Reason, Class, ConsolidationType; Command: candidates and
// replacements), with what a durable workflow needs on top: a deterministic instance ID (commands are
// keyed per candidate or per NodePool), and what to remember when a command fails.
//
// This interface is what other methods are written against: change it only by adding optional members.
import type { NodeSelectorRequirement, Node } from '../../../models/kube.js';
import type {
  ConsolidationPolicy,
  DisruptionReason,
  NodeClaim,
  NodePool,
} from '../../../models/karpenter.js';
import type { CandidateCause } from '../../../decisions/explain/decision-record.js';
import type { HandlerContext } from '../../../runtime/definitions.js';
import type { LifecycleDependencies } from '../../dependencies.js';
import type { SweepContext } from '../../sweep-step/sweep-step.js';

/** Upstream's consolidation type label of karpenter_voluntary_disruption_decisions_total ('' otherwise). */
export type ConsolidationType = '' | 'empty' | 'single' | 'multi';

/**
 * How the method's commands are keyed, which fixes their workflow's instance ID
 * (`<instancePrefix>-<uid>`):
 * - 'candidate': one command per candidate, each its own workflow (`replace-<NodeClaim uid>`), as many at
 *   once as the budget allows (the drift fan-out);
 * - 'nodePool': one command at a time per NodePool (`consolidate-<NodePool uid>`); while it runs, no
 *   method with the same prefix computes commands for that NodePool (upstream's singleton waits the same).
 */
export interface WorkflowKey {
  per: 'candidate' | 'nodePool';
  instancePrefix: string;
}

/** One NodePool in one sweep, as a method sees it. */
export interface MethodPass {
  /** The sweep (or freed-slot run) this pass is part of: deps, the read-once view, orchestrations, log. */
  sweep: SweepContext;
  nodePool: NodePool;
  /** The NodePool's NodeClaims as the view has them now: earlier methods' marks of this pass included. */
  nodeClaims: readonly NodeClaim[];
  nodesFor(nodeClaim: NodeClaim): readonly Node[];
  now: Date;
  /**
   * How many more of this NodePool's nodes may start disrupting for the method's reason now (its budget
   * minus every node already disrupting, for any reason); Infinity for a forceful method.
   */
  allowed: number;
  /** Work several methods of a pass share (the pods, the consolidation candidates), computed once. */
  shared<T>(key: string, compute: () => Promise<T>): Promise<T>;
  /**
   * Where the method notes, for the pass's decision record, what it already knows: why it keeps a node
   * it judged, and a command's prices and pods. Absent when no record is kept; noting costs no read.
   */
  recorder?: PassRecorder;
}

/** What a method notes for the decision record of its pass (bound to the method by the step). */
export interface PassRecorder {
  /** A node the method judged and keeps, with the one line its Event carries (or would). */
  keep(nodeClaim: string, node: string | undefined, cause: CandidateCause, message: string): void;
  /** What the method knows of a command it returns; the step states what it does not. */
  command(command: DisruptionCommand, facts: CommandFacts): void;
}

export interface CommandFacts {
  /** Each candidate's price, USD/h, in the command's order. */
  candidatePrices?: number[];
  /** The replacements' instance types, cheapest first. */
  replacementTypes?: string[];
  /** The replacements' cheapest price, USD/h. */
  replacementPrice?: number;
  /** `namespace/name` of the pods the command moves. */
  podsMoved?: string[];
}

/** A NodeClaim a command disrupts, by name and UID (a NodeClaim recreated under the name is not it). */
export interface CommandCandidate {
  name: string;
  uid: string;
  /**
   * Set by validation: the candidate's pods as validated (activePodsDigest). The marks compare it with a
   * fresh list once the node is tainted, so a pod that landed after the validation's read calls it off.
   */
  podsDigest?: string;
}

/** One replacement NodeClaim the executor creates from the NodePool's current template. */
export interface ReplacementTemplate {
  /** Requirements in place of the template's (consolidation's cheaper instance types); absent: as is. */
  requirements?: NodeSelectorRequirement[];
  /**
   * The zone to keep (drift): the template's requirements plus this zone, when they allow it. The
   * candidate's zone-spread pods may only go back to its zone (maxSkew 1 once they are evicted from it).
   */
  zone?: string;
}

/** What a method decided and the executor carries out. Plain data: it is a durable workflow's input. */
export interface DisruptionCommand {
  /** The deciding method's name (methods.ts looks it up for validation and for its workflow key). */
  method: string;
  /** The real reason: the DisruptionReason condition, events, metrics and the budget it counts against. */
  reason: string;
  nodePool: { name: string; uid: string };
  candidates: CommandCandidate[];
  /** Launched and waited for (Initialized) before any candidate is deleted; empty: delete only. */
  replacements: ReplacementTemplate[];
  /** Why, in words: the DisruptionReason condition's message. */
  detail: string;
  decidedAt: string;
  /** Seconds to wait before the method's validate() re-checks the command (0: at once). */
  validateAfterSeconds: number;
  /**
   * Which try this is, so a retry after a failure names its replacements afresh and never meets the
   * failed one being deleted (replacement `i` of try `attempt` of the first candidate's UID).
   */
  attempt: number;
  /**
   * Set when a failure is remembered on the NodePool (command memory, with the NodePool's backoff): the
   * key the method's search skips while it is held. Absent: the failure is remembered on each candidate
   * (karpenter.azure.com/replacement-attempts and -backoff-until), which holds that node back.
   */
  key?: string;
  consolidationType: ConsolidationType;
  /**
   * The NodePool's consolidation policy when the command was decided, for upstream's
   * `consolidation_policy` label of karpenter_nodeclaims_disrupted_total (absent in inputs recorded before).
   */
  consolidationPolicy?: ConsolidationPolicy;
  /** USD/h the command saves, for the log (consolidation). */
  savings?: number;
  /**
   * Set when a workflow of the deciding method's own carries the command out in place of the executor
   * (repair's reboot and eviction-notice workflow, which replaces the node itself if it must): the
   * orchestration the disruption step starts under the command's instance ID, and its input. That
   * workflow marks the candidates itself; the step marks them in the sweep's view at once, so the
   * methods after this one in the pass count them as disrupting.
   */
  ownWorkflow?: { orchestration: string; input: unknown };
}

/** What validate() answers: the command to carry out (possibly with fewer candidates), or why not. */
export type CommandValidation = { command: DisruptionCommand } | { invalid: string };

interface MethodBase {
  /** Unique among methods, stable (it is recorded in workflow inputs): 'drift', 'emptiness', … */
  readonly name: string;
  readonly consolidationType: ConsolidationType;
  readonly workflow: WorkflowKey;
  /** Whether the method acts on this NodePool at all (static or not, its consolidation policy). */
  appliesTo(nodePool: NodePool): boolean;
  /**
   * The commands for this NodePool now, at most `pass.allowed` candidates in all for a graceful method.
   * Every candidate must be an initialized NodeClaim of the NodePool that is not already disrupting
   * (deleting, marked, tainted, NotReady). 'candidate'-keyed methods return one candidate per command.
   */
  computeCommands(pass: MethodPass): Promise<DisruptionCommand[]>;
  /**
   * Re-checks a command against fresh state after `validateAfterSeconds`, inside the workflow (an
   * activity: it may read and write, and must be idempotent); the workflow then marks the candidates.
   * Absent: the command is carried out as decided, and the sweep marks its candidates before the
   * workflow starts.
   */
  validate?(
    deps: LifecycleDependencies,
    command: DisruptionCommand,
    context: Pick<HandlerContext, 'orchestrations' | 'invocationId'>,
  ): Promise<CommandValidation>;
}

/**
 * A method, of upstream's two classes: graceful ones respect the NodePool's disruption budget for the
 * reason they name and the candidates' do-not-disrupt protections; forceful ones (expiration, repair)
 * act regardless of budget, under any reason.
 */
export type DisruptionMethod =
  | (MethodBase & { readonly class: 'graceful'; readonly reason: DisruptionReason })
  | (MethodBase & { readonly class: 'forceful'; readonly reason: string });
