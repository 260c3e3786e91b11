// The Function App's entry point (package.json "main"): the app's functions (definitions.ts), on this
// process's dependencies (built from its app settings on first use, so loading does no I/O), registered
// with the Functions host, and the telemetry the host exports.
import { getDependencies } from '../shared/lifecycle/dependencies.js';
import {
  registerWithAzureFunctions,
  startTelemetryInFunctionsHost,
} from '../shared/runtime/azure-functions.js';
import type { FunctionDefinition } from '../shared/runtime/definitions.js';
import { appDefinitions } from './definitions.js';

export const definitions: readonly FunctionDefinition[] = appDefinitions(getDependencies);

for (const definition of definitions) registerWithAzureFunctions(definition);
startTelemetryInFunctionsHost();
