// The scheduling simulation: which pending pods fit on existing Nodes and in-flight NodeClaims, which
// new NodeClaims to create for the rest, and why the remainder cannot be scheduled.
//
// Follows Karpenter's Scheduler.Solve (KS pkg/controllers/provisioning/scheduling/scheduler.go):
// - pods are taken largest CPU first, then memory, then oldest (queue.go);
// - each pod goes to the first existing node or in-flight NodeClaim that fits (lowest index), else to
//   the emptiest NodeClaim opened in this simulation that still fits, else to a new NodeClaim from the
//   first NodePool by weight that can hold it; never "cheapest across NodePools";
// - a failing pod is relaxed one preference at a time (pods.ts), then retried after the other pods
//   while a full pass still makes progress (affinity to pods scheduled later in the batch);
// - a NodeClaim keeps every instance type that still fits its pods; at the end they are ordered by
//   their cheapest available compatible offering and cut at maxInstanceTypes (600).
// Differences, on purpose: bad input (unreadable quantities or requirements) makes that pod
// unschedulable with the reason instead of failing the whole solve; a pod without affinity or spread
// constraints that fails once is not retried (nothing later in the batch can make room for it).
import type { SchedulingInput, SchedulingResult } from './types.js';
import { Simulation } from './simulation.js';

export function solve(input: SchedulingInput): SchedulingResult {
  return new Simulation(input).run();
}
