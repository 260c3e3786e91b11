// Every function of the app, grouped by workflow, as one table built on a dependency source: the Azure
// entry (index.ts) builds it on the process's own dependencies and registers it with the Functions host;
// the local in-process host builds it on the set it made for the emulators, so nothing is installed into
// process-wide state. How the functions fit together, and where a new one goes: docs/design.md.
import type { DependencySource } from '../shared/lifecycle/dependencies.js';
import type { FunctionDefinition } from '../shared/runtime/definitions.js';
import { disruptionFunctions } from './disruption.js';
import { explainFunctions } from './explain.js';
import { launchFunctions } from './launch.js';
import { provisioningFunctions } from './provisioning.js';
import { repairFunctions } from './repair.js';
import { rolloutFunctions } from './rollout.js';
import { terminationFunctions } from './termination.js';
import { triggerFunctions } from './triggers.js';

export function appDefinitions(dependencies: DependencySource): readonly FunctionDefinition[] {
  return [
    ...triggerFunctions(dependencies),
    ...launchFunctions(dependencies),
    ...terminationFunctions(dependencies),
    ...disruptionFunctions(dependencies),
    ...repairFunctions(dependencies),
    ...rolloutFunctions(dependencies),
    ...provisioningFunctions(dependencies),
    ...explainFunctions(dependencies),
  ];
}
