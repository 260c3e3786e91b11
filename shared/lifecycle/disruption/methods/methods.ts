// The one list of disruption methods, in the order the executor asks them each pass, per NodePool
// (upstream's controller.go order, with expiration first: it is forceful, needs no budget, and frees
// capacity the others would otherwise count; then repair, forceful too, so a broken node is not also
// chosen for consolidation or drift). Every method runs in every pass and sees the marks the ones
// before it made; methods that share a per-NodePool workflow (the consolidation ones) stop at the first
// that decides a command, as upstream's do. A new method is one file exporting a DisruptionMethod
// (method.ts) and one entry here.
import { driftMethod, staticDriftMethod } from './drift.js';
import { emptinessMethod } from './emptiness.js';
import { expirationMethod } from './expiration.js';
import type { DisruptionMethod } from './method.js';
import { multiNodeConsolidationMethod } from './multi-node-consolidation.js';
import { repairMethod } from './repair.js';
import { singleNodeConsolidationMethod } from './single-node-consolidation.js';

export const disruptionMethods: readonly DisruptionMethod[] = [
  expirationMethod,
  repairMethod,
  emptinessMethod,
  staticDriftMethod,
  driftMethod,
  multiNodeConsolidationMethod,
  singleNodeConsolidationMethod,
];

/** The method that decided a command (by its recorded name), or undefined for a name no longer listed. */
export function methodNamed(name: string): DisruptionMethod | undefined {
  return disruptionMethods.find((m) => m.name === name);
}
