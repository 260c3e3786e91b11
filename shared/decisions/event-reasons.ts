// Every reason the app writes Events with, in one table, so a user's `kubectl get events
// --field-selector reason=…` and alerts written for Karpenter find the app's Events under upstream's names,
// and so a new reason cannot appear without being named here: the lifecycle's event port takes only
// these (shared/lifecycle/dependencies.ts), and test/unit/event-reasons.test.ts holds this table against
// docs/events.md and upstream's list (docs/reference/karpenter-event-reasons.txt).

/**
 * Where a reason comes from: `upstream` is a reason Karpenter's core emits (the app emits it for the same
 * thing, on the same objects); `azure-provider` is a reason Karpenter's Azure provider gives a failed
 * creation (its CreateError condition reasons); `app` is this app's own, for what upstream has no Event.
 */
export type EventReasonOrigin = 'upstream' | 'azure-provider' | 'app';

export const EventReasonOrigins = {
  // Upstream's reasons (kubernetes-sigs/karpenter pkg/events/reason.go).
  DisruptionBlocked: 'upstream',
  DisruptionTerminating: 'upstream',
  Unconsolidatable: 'upstream',
  FailedScheduling: 'upstream',
  Nominated: 'upstream',
  NodeRepairBlocked: 'upstream',
  Disrupted: 'upstream',
  Evicted: 'upstream',
  FailedDraining: 'upstream',
  TerminationGracePeriodExpiring: 'upstream',
  InsufficientCapacityError: 'upstream',
  UnregisteredTaintMissing: 'upstream',
  // The Azure provider's reasons for a VM creation Azure refused or failed.
  SKUNotAvailable: 'azure-provider',
  AllocationFailure: 'azure-provider',
  ZonalAllocationFailure: 'azure-provider',
  OverconstrainedAllocationFailure: 'azure-provider',
  OverconstrainedZonalAllocationFailure: 'azure-provider',
  SubscriptionQuotaReached: 'azure-provider',
  LaunchFailed: 'azure-provider',
  // The app's own.
  Throttled: 'app',
  LaunchTimeout: 'app',
  AuthorizationFailed: 'app',
  CapacityReservationUnavailable: 'app',
  LaunchRetrying: 'app',
  NodeClassNotFound: 'app',
  NodeClassInvalid: 'app',
  NodePoolNotFound: 'app',
  InvalidRequirements: 'app',
  ImageNotResolved: 'app',
  VMNameConflict: 'app',
  RegistrationTimeout: 'app',
  InvalidDisruptionBudget: 'app',
  DisruptionReplaced: 'app',
  DisruptionReplacementFailed: 'app',
  NodeRepairStarted: 'app',
  NodeRepairRebooted: 'app',
  NodeRepaired: 'app',
  NodeRepairReplacing: 'app',
  RolloutStarted: 'app',
  RolloutWaveStarted: 'app',
  RolloutSucceeded: 'app',
  RolloutGateFailed: 'app',
  RolloutRolledBack: 'app',
} as const satisfies Record<string, EventReasonOrigin>;

export type EventReason = keyof typeof EventReasonOrigins;

export const eventReasons: readonly EventReason[] = Object.keys(EventReasonOrigins) as EventReason[];
