// The Function App's entry point (package.json "main"): every function, grouped by workflow, registered
// with the Functions host from this one table. The local in-process host runs the same `definitions`.
// How the functions fit together, and where a new one goes: docs/design.md.
import {
  registerWithAzureFunctions,
  startTelemetryInFunctionsHost,
} from '../shared/runtime/azure-functions.js';
import type { FunctionDefinition } from '../shared/runtime/definitions.js';
import { disruptionFunctions } from './disruption.js';
import { launchFunctions } from './launch.js';
import { provisioningFunctions } from './provisioning.js';
import { repairFunctions } from './repair.js';
import { terminationFunctions } from './termination.js';
import { triggerFunctions } from './triggers.js';

export const definitions: readonly FunctionDefinition[] = [
  ...triggerFunctions,
  ...launchFunctions,
  ...terminationFunctions,
  ...disruptionFunctions,
  ...repairFunctions,
  ...provisioningFunctions,
];

for (const definition of definitions) registerWithAzureFunctions(definition);
startTelemetryInFunctionsHost();
