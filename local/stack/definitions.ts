// The function definitions a local host runs: the Function App's own, with two local adjustments that
// change where and how often the lifecycle sweep runs, never what it does.
import type { DependencySource } from '../../shared/lifecycle/dependencies.js';
import { DEFAULT_SWEEP_LEASE, runLifecycleSweep } from '../../shared/lifecycle/sweep/sweep.js';
import type {
  ActivityFunctionDefinition,
  FunctionDefinition,
  TimerFunctionDefinition,
} from '../../shared/runtime/definitions.js';
import { TriggerNames } from '../../shared/runtime/function-names.js';

/**
 * Confines the lifecycle sweep to the NodeClaims matching a label selector, under its own Lease: the
 * shipped Lease name in a namespace of the run's own (where provisionSweepLeaseNamespace granted the
 * shipped Lease Role). Several hosts then share one control plane (the end-to-end tests do) without
 * sweeping each other's NodeClaims or waiting for each other's Lease.
 */
export interface SweepScope {
  nodeClaimSelector: string;
  leaseNamespace: string;
}

export interface LocalDefinitionOptions {
  /** NCRONTAB (with seconds) for the lifecycle sweep; the Functions host reads it at indexing time too. */
  sweepSchedule?: string;
  sweepScope?: SweepScope;
  /** Sees every activity call with its input and outcome (the timeline and the tests use it). */
  onActivity?: ActivityListener;
}

export interface ActivityCall {
  functionName: string;
  input: unknown;
  startedAt: number;
  endedAt: number;
  result?: unknown;
  error?: string;
}

export type ActivityListener = (call: ActivityCall) => void;

const SWEEP_FUNCTION = TriggerNames.lifecycleSweep;

export function localDefinitions(
  base: readonly FunctionDefinition[],
  dependencies: DependencySource,
  options: LocalDefinitionOptions = {},
): FunctionDefinition[] {
  return base.map((definition) => {
    if (definition.kind === 'timer' && definition.name === SWEEP_FUNCTION) {
      return sweep(definition, dependencies, options);
    }
    if (definition.kind === 'activity' && options.onActivity) return tapped(definition, options.onActivity);
    return definition;
  });
}

function sweep(
  definition: TimerFunctionDefinition,
  getDependencies: DependencySource,
  options: LocalDefinitionOptions,
): TimerFunctionDefinition {
  const scope = options.sweepScope;
  return {
    ...definition,
    schedule: options.sweepSchedule ?? definition.schedule,
    ...(scope
      ? {
          handler: async (_timer, context) => {
            const result = await runLifecycleSweep(getDependencies(), context, {
              nodeClaimSelector: scope.nodeClaimSelector,
              lease: { ...DEFAULT_SWEEP_LEASE, namespace: scope.leaseNamespace },
            });
            if (result.status === 'skipped')
              context.log.info('lifecycle sweep skipped', { reason: result.reason });
          },
        }
      : {}),
  };
}

function tapped(
  definition: ActivityFunctionDefinition,
  listener: ActivityListener,
): ActivityFunctionDefinition {
  return {
    ...definition,
    handler: async (input, context) => {
      const startedAt = Date.now();
      try {
        const result = await definition.handler(input, context);
        listener({ functionName: definition.name, input, startedAt, endedAt: Date.now(), result });
        return result;
      } catch (error) {
        const message = error instanceof Error ? error.message : String(error);
        listener({ functionName: definition.name, input, startedAt, endedAt: Date.now(), error: message });
        throw error;
      }
    },
  };
}
