// The disruption steps, in order: expiration first (forceful, it needs no budget and frees capacity
// the others would otherwise count), pod events before anything that reads Consolidatable, drift marking
// before the fan-out (a node that drifted in this sweep can be replaced in the same sweep), drift before
// consolidation (upstream's method order), static NodePools after it (replacements just started are then
// already visible as in flight, not missing replicas). Orphan VM collection has its own timer
// (functions/collect-orphan-vms.ts): listing VMs on every sweep would spend ARM's List VMs quota.
//
// steps.ts spreads this list into lifecycleSteps while the step modules import forEachObject from
// steps.ts: an import cycle. Each entry defers to its step at run time, so whichever module loads first,
// nothing here reads a binding that is not initialized yet.
import { consolidationStep } from '../disruption/consolidation-step.js';
import { driftStep } from '../disruption/drift-step.js';
import { expirationStep } from '../disruption/expiration-step.js';
import { fanOutStep } from '../disruption/fan-out-step.js';
import { podEventsStep } from '../disruption/pod-events-step.js';
import { staticNodePoolsStep } from '../static-nodepools.js';
import type { SweepStep } from './steps.js';

export const disruptionSteps: readonly SweepStep[] = [
  { name: 'expiration', run: (context) => expirationStep.run(context) },
  { name: 'pod-events', run: (context) => podEventsStep.run(context) },
  { name: 'drift', run: (context) => driftStep.run(context) },
  { name: 'drift-replacement', run: (context) => fanOutStep.run(context) },
  { name: 'consolidation', run: (context) => consolidationStep.run(context) },
  { name: 'static-nodepools', run: (context) => staticNodePoolsStep.run(context) },
];
