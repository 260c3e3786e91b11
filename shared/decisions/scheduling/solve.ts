// The scheduling simulation: which pending pods fit on existing Nodes and in-flight NodeClaims, which
// new NodeClaims to create for the rest, and why the remainder cannot be scheduled. Pure: plain data in
// (types.ts), plain data out; the caller lists the cluster, creates the NodeClaims and emits events.
//
// Follows Karpenter's Scheduler.Solve (KS pkg/controllers/provisioning/scheduling/scheduler.go):
// - pods are taken largest CPU first, then memory, then oldest, then by UID (queue.go);
// - each pod goes to the first existing node or in-flight NodeClaim that fits (initialized first, then
//   by name), else to the emptiest NodeClaim opened in this simulation that still fits, else to a new
//   NodeClaim from the first NodePool by weight that can hold it; never "cheapest across NodePools";
// - effective requests as kube-scheduler computes them, plus `pods: 1` (resources.ts); taints of the
//   NodePool template (startupTaints ignored), nodeSelector and the first required node-affinity term,
//   the heaviest preferred term as required, relaxed one step per failed attempt (pods.ts); with option
//   preferencePolicy Ignore (upstream's --preference-policy) preferences are never tried;
// - topology spread, pod affinity and anti-affinity with Karpenter's domain rules (topology.ts);
//   DaemonSet overhead per instance type (daemonsets.ts); host ports (host-ports.ts); minValues
//   (min-values.ts: with option minValuesPolicy BestEffort a new NodeClaim opens with its minValues
//   lowered to what its options have, and pods joining it keep to the lowered ones); limits subtracted
//   pessimistically with the largest option of each new NodeClaim;
// - a failing pod is retried after the others while a full pass still makes progress;
// - a NodeClaim keeps every instance type that still fits its pods; at the end they are ordered by their
//   cheapest available compatible offering and cut at maxInstanceTypes (600) (new-claim.ts).
//
// Differences, on purpose:
// - cost-aware packing (cost-packer.ts): after the first fit above, the pods no topology answer or host
//   port depends on are re-packed among the new NodeClaims of the NodePool that took them (those
//   constrained only by zone-like keys only among NodeClaims with the same requirements, so the same
//   zone), into the sizes with the best price for their total demand, the last NodeClaim sized down.
//   The plan is kept only when it passes the first fit's checks (fit with DaemonSets, requirements,
//   minValues, limits charged with each NodeClaim's largest option, `nodes` counting NodeClaims) and is
//   cheaper. So a solve launches less than upstream's for the same pods: different NodeClaims (often
//   more, smaller ones, each on the cheapest size per vCPU or GiB), never a different NodePool, never a
//   pod moved off existing or in-flight capacity, never a pod with hostname topology moved at all.
//   Option `packing`: CostWithoutMoreNodeClaims keeps a cheaper plan only if it needs no more new
//   NodeClaims (a consolidation command can replace with one at most), FirstFit is upstream's placement;
// - bad input (an unreadable quantity, requirement or spec) makes that pod unschedulable with the
//   reason instead of failing the whole solve, and an unreadable NodePool is reported for every pod;
// - a pod whose constraints cannot change during the solve (none, or only anti-affinity and hostname
//   spreads, whose counts only grow) is not retried after failing, and the targets that refused it are
//   remembered: nothing later in the batch can make room for it (this is what keeps 20,000 pods fast);
// - among equally good topology domains the first is taken, not a random one, so a solve is
//   reproducible; ties in NodeClaim order are kept stable for the same reason;
// - there is no time limit (Karpenter stops at 1 minute): the bench shows 20,000 pods take seconds;
// - volume topology only as the caller passes it (SchedulingPod.volumeRequirements: a bound volume's node
//   affinity); not simulated: a StorageClass's allowed topologies for claims not yet bound, CSI volume
//   limits, DRA, reserved capacity, NodeOverlays;
// - every NodePool's rejection of a pod carries its cause (ExclusionCause), classified where the check
//   that rejects it runs, for the decision record and the FailedScheduling event.
import type { SchedulingInput, SchedulingResult } from './types.js';
import { Simulation } from './simulation.js';

export function solve(input: SchedulingInput): SchedulingResult {
  return new Simulation(input).run();
}
