// `npm run bench`: the lifecycle sweep over realistic clusters of 500 and 5,000 Nodes and NodeClaims,
// the drift makespan, the launch polling load, the quota and placement-score reads before the PUT, the
// Durable actions per NodeClaim lifetime, the provisioning solve, what the decision records cost per
// window and pass, and the bridge's memory at 20,000
// pending pods, each printing its figures beside its goals; the newest recorded day's figures beside
// theirs; what the telemetry exports at 100 and 1,000 nodes; then the monthly cost on Flex Consumption.
import { runSweepBench } from './sweep-bench.js';

await runSweepBench();
await (await import('./consolidation-bench.js')).runConsolidationBench();
await (await import('./drift-bench.js')).runDriftBench();
await (await import('./launch-polling-bench.js')).runLaunchPollingBench();
await (await import('./launch-reads-bench.js')).runLaunchReadsBench();
await (await import('./durable-work-bench.js')).runDurableWorkBench();
await (await import('./provisioning-bench.js')).runProvisioningBench();
await (await import('./decision-records-bench.js')).runDecisionRecordsBench();
await (await import('./bridge-pods-bench.js')).runBridgePodsBench();
await (await import('./day-bench.js')).runDayBench();
await (await import('./telemetry-bench.js')).runTelemetryBench();
await (await import('./cost.js')).runCostBench();
