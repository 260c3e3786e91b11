// `npm run bench`: the lifecycle sweep over realistic clusters of 500 and 5,000 Nodes and NodeClaims,
// the drift makespan, and the launch polling load, each printing its figures beside its goals.
import { runSweepBench } from './sweep-bench.js';

await runSweepBench();
await (await import('./drift-bench.js')).runDriftBench();
await (await import('./launch-polling-bench.js')).runLaunchPollingBench();
await (await import('./provisioning-bench.js')).runProvisioningBench();
