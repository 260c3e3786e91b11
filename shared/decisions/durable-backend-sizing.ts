// How much Durable backend a cluster needs: the Durable Task actions a second a fleet of NodeClaims
// causes at a burst of launches and in steady state, and what that asks of each backend: the Durable
// Task Scheduler's Consumption SKU (a ceiling of actions a second), its Dedicated SKU (capacity units of
// a fixed rate each) and Azure Storage (control-queue partitions). Pure: the workload in, the sizing out;
// `npm run cost` prints the table docs/cost.md carries ("The Durable backend").
//
// An action is a message the scheduler dispatches to the app: an orchestration's start, an activity's
// scheduling and its result, a timer firing, an external event (Durable Task Scheduler billing,
// https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/durable-task-scheduler-billing).
// The workload's unit is the NodeClaim: every action its launch monitor, replacement, termination and
// its share of the provisioning windows cause over its life. That count is measured, not estimated: the
// local host counts the engine's work as the scheduler bills it (local/host/durable-work.ts), and the
// bench case test/bench/durable-work-bench.ts launches and terminates NodeClaims through it;
// MEASURED_ACTIONS_PER_NODECLAIM holds its figures, each with the command line that measures it again.

/** Seconds in a month as the scheduler's documentation counts them (730 h). */
export const SECONDS_PER_MONTH = 2_628_000;

/** A count of Durable Task actions over one NodeClaim's life, measured, with how to measure it again. */
export interface MeasuredActionsPerNodeClaim {
  /** Actions over one NodeClaim's life, launch through termination. */
  value: number;
  /** How long the emulated VM creation took: the launch monitor's polls grow with it. */
  vmCreationSeconds: number;
  /** The count by orchestration type, per NodeClaim. */
  byOrchestration: Readonly<Record<string, number>>;
  /** What measured it, and on what. */
  source: string;
  /** The command line that measures it again. */
  remeasure: string;
}

const DURABLE_WORK_BENCH =
  "test/bench/durable-work-bench.ts: 20 NodeClaims of a static NodePool launched and terminated through the local host, the app's shipped poll settings";

/**
 * The bench's measurements. `fastCreation` (VM creation 30 s, a fast Azure creation) is the sizing's
 * default input; `slowCreation` (90 s) is the case of slow creation, where the launch monitor waits longer.
 * Measured with the second versions of the launch monitor and termination, which wait inside bounded
 * activities (the first versions measured 31.3 and 31.0 in two runs at 30 s, 60.6 and 61 at 90 s).
 */
export const MEASURED_ACTIONS_PER_NODECLAIM = {
  fastCreation: {
    value: 6,
    vmCreationSeconds: 30,
    byOrchestration: { launchMonitorV2: 3, terminateNodeClaimV2: 3 },
    source: DURABLE_WORK_BENCH,
    remeasure: 'npx tsx test/bench/durable-work-bench.ts',
  },
  slowCreation: {
    value: 10,
    vmCreationSeconds: 90,
    byOrchestration: { launchMonitorV2: 7, terminateNodeClaimV2: 3 },
    source: DURABLE_WORK_BENCH,
    remeasure: 'DURABLE_BENCH_CREATE_SECONDS=90 npx tsx test/bench/durable-work-bench.ts',
  },
} as const satisfies Record<string, MeasuredActionsPerNodeClaim>;

/** A figure from Microsoft's documentation, with the page it is on. */
export interface SourcedFigure {
  value: number;
  source: string;
}

const BILLING =
  'https://learn.microsoft.com/azure/azure-functions/durable/durable-task-scheduler/durable-task-scheduler-billing';

/** The Durable Task Scheduler's published limits. Prices are not among them: see DURABLE_PRICES. */
export const DURABLE_TASK_SCHEDULER_LIMITS = {
  /** Consumption SKU: "Supports up to 500 actions per second." */
  consumptionMaxActionsPerSecond: { value: 500, source: `${BILLING}#consumption-sku` },
  /** Consumption SKU: "Retains data for a maximum of 30 days." */
  consumptionRetentionDays: { value: 30, source: `${BILLING}#consumption-sku` },
  /** Dedicated SKU: "Each CU supports up to 2,000 actions per second and 50 GB of orchestration data storage." */
  dedicatedActionsPerSecondPerCapacityUnit: { value: 2000, source: `${BILLING}#dedicated-sku` },
  /** Dedicated SKU: "Purchase up to three CUs." */
  dedicatedMaxCapacityUnits: { value: 3, source: `${BILLING}#dedicated-sku` },
  /** Dedicated SKU: "High availability with multi-CU deployments. A minimum of three CUs is required." */
  dedicatedHighAvailabilityCapacityUnits: { value: 3, source: `${BILLING}#dedicated-sku` },
} as const satisfies Record<string, SourcedFigure>;

/** Azure Storage's published limits on the partitions of a task hub. */
export const AZURE_STORAGE_LIMITS = {
  /** "A positive integer between 1 and 16. The default value is 4." */
  maxPartitions: {
    value: 16,
    source:
      'https://learn.microsoft.com/dotnet/api/microsoft.azure.webjobs.extensions.durabletask.azurestorageoptions.partitioncount',
  },
} as const satisfies Record<string, SourcedFigure>;

/**
 * Prices the documentation does not give: the Consumption SKU's price per action and the Dedicated SKU's
 * price per capacity unit-month are published only on the Azure Functions pricing page (regional, and not
 * in this repository's copy of the Retail Prices list), so no cost is computed from them here.
 */
export const DURABLE_PRICES = {
  consumptionPerAction: null,
  dedicatedPerCapacityUnitMonth: null,
  source: 'https://azure.microsoft.com/pricing/details/functions/',
} as const;

/** A burst of launches: `launches` NodeClaims launched evenly within `withinMinutes`. */
export interface DurableBurst {
  launches: number;
  withinMinutes: number;
}

export interface DurableWorkload {
  /** NodeClaims in the fleet. */
  nodes: number;
  /** Durable Task actions over one NodeClaim's life (MEASURED_ACTIONS_PER_NODECLAIM's, as a rule). */
  actionsPerNodeClaim: number;
  /** The bursts to size for (a scale-up, or a drift or expiry wave). */
  bursts: readonly DurableBurst[];
  /** How long a NodeClaim lives on average, in hours: the fleet is replaced once in this time at steady state. */
  meanNodeClaimLifetimeHours: number;
}

export interface BackendFit {
  /** The Consumption SKU carries the rate (at most its 500 actions a second). */
  consumptionFits: boolean;
  /** Dedicated capacity units the rate needs (at least one; may exceed the three that can be bought). */
  dedicatedCapacityUnits: number;
  /** Those units can be bought (at most three). */
  dedicatedFits: boolean;
}

export interface BurstSizing extends DurableBurst {
  /** Launches a minute while the burst lasts. */
  launchesPerMinute: number;
  /** Actions a second while the burst lasts: each launch's lifetime actions counted at its launch. */
  actionsPerSecond: number;
  fit: BackendFit;
}

export interface DurableSizing {
  workload: DurableWorkload;
  /** One per workload burst, in its order. */
  bursts: BurstSizing[];
  /** Actions a second at steady state: the fleet replaced once a lifetime. */
  steadyActionsPerSecond: number;
  /** Actions a month at steady state (what the Consumption SKU bills). */
  steadyActionsPerMonth: number;
  steady: BackendFit;
}

/** What each backend needs for an action rate. */
export function backendFit(actionsPerSecond: number): BackendFit {
  const perUnit = DURABLE_TASK_SCHEDULER_LIMITS.dedicatedActionsPerSecondPerCapacityUnit.value;
  const units = Math.max(1, Math.ceil(actionsPerSecond / perUnit));
  return {
    consumptionFits: actionsPerSecond <= DURABLE_TASK_SCHEDULER_LIMITS.consumptionMaxActionsPerSecond.value,
    dedicatedCapacityUnits: units,
    dedicatedFits: units <= DURABLE_TASK_SCHEDULER_LIMITS.dedicatedMaxCapacityUnits.value,
  };
}

function positive(name: string, value: number): void {
  if (!Number.isFinite(value) || value <= 0)
    throw new RangeError(`${name} must be a positive number, not ${value}`);
}

/**
 * The action rates of a workload and what each backend needs for them. A burst counts every action of
 * a NodeClaim's life at its launch, which overstates its rate by the actions that come later
 * (termination, and the polls of a creation that outlasts the burst): an upper bound, which is what
 * sizing wants.
 */
export function durableBackendSizing(workload: DurableWorkload): DurableSizing {
  positive('nodes', workload.nodes);
  positive('actionsPerNodeClaim', workload.actionsPerNodeClaim);
  positive('meanNodeClaimLifetimeHours', workload.meanNodeClaimLifetimeHours);
  const bursts = workload.bursts.map((burst): BurstSizing => {
    positive('burst launches', burst.launches);
    positive('burst withinMinutes', burst.withinMinutes);
    const launchesPerMinute = burst.launches / burst.withinMinutes;
    const actionsPerSecond = (launchesPerMinute * workload.actionsPerNodeClaim) / 60;
    return { ...burst, launchesPerMinute, actionsPerSecond, fit: backendFit(actionsPerSecond) };
  });
  const launchesPerSecond = workload.nodes / (workload.meanNodeClaimLifetimeHours * 3600);
  const steadyActionsPerSecond = launchesPerSecond * workload.actionsPerNodeClaim;
  return {
    workload,
    bursts,
    steadyActionsPerSecond,
    steadyActionsPerMonth: steadyActionsPerSecond * SECONDS_PER_MONTH,
    steady: backendFit(steadyActionsPerSecond),
  };
}

/** The most launches a minute an action rate carries, at `actionsPerNodeClaim` each (the burst's inverse). */
export function launchesPerMinuteAt(actionsPerSecond: number, actionsPerNodeClaim: number): number {
  positive('actionsPerSecond', actionsPerSecond);
  positive('actionsPerNodeClaim', actionsPerNodeClaim);
  return (actionsPerSecond * 60) / actionsPerNodeClaim;
}

/** The actions per NodeClaim at which `launches` within `withinMinutes` make `actionsPerSecond` (a goal's budget). */
export function actionsPerNodeClaimFor(actionsPerSecond: number, burst: DurableBurst): number {
  positive('actionsPerSecond', actionsPerSecond);
  positive('burst launches', burst.launches);
  positive('burst withinMinutes', burst.withinMinutes);
  return (actionsPerSecond * 60 * burst.withinMinutes) / burst.launches;
}
