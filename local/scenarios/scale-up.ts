// scale-up: 60 pending pods (three Deployments of 20 with different requests, each spread across zones
// with maxSkew 1) go from Pending to Running with nothing but a dynamic NodePool. The real kube-scheduler
// marks them Unschedulable, the bridge signals the provisioning batcher, one window solves over all of
// them and creates NodeClaims, launch and registration bring the Nodes up, the scheduler binds the pods
// and the simulated kubelet runs them.
import { catalogOfferings } from '../../shared/cloudprovider/catalog-offerings.js';
import { WellKnown } from '../../shared/models/index.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import {
  POD_COUNT,
  WORKLOADS,
  cpuCores,
  createDeployments,
  deleteDeployments,
  describeWorkloads,
  dynamicNodePool,
  gibibytes,
  hourlyPrice,
  instanceTypeOf,
  lowerBound,
  runningPods,
  summarize,
} from './deployment-set.js';
import {
  deleteNodeClaims,
  createNodeClassAndPool,
  deleteNodePoolAndClass,
  nodeClaimsWithNodeNames,
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from './scenario.js';
import { functionAppOf } from '../stack/local-stack.js';

export const scaleUp: Scenario = {
  name: 'scale-up',
  title: `scale-up: ${POD_COUNT} pending pods become Running through provisioning`,
  description:
    `Three Deployments (${describeWorkloads()}), each ` +
    'spread across zones with maxSkew 1, and a dynamic NodePool. The provisioning batcher solves the pending pods in ' +
    'windows (1 s idle / 10 s max, divided by --speed), creates NodeClaims, and every pod ends Running on a Node of the NodePool.',
  usesPods: true,
  play,
};

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, recorder, runId } = context;
  const app = functionAppOf(stack);
  const metrics = app.deps.metrics;
  const name = `scale-${runId}`;
  const nodePool = dynamicNodePool(name, runId);
  await createNodeClassAndPool(context, nodePool);
  const windowsBefore = metrics.count('karpenter_scheduler_scheduling_duration_seconds');

  const started = Date.now();
  await createDeployments(context, name);
  context.note(
    `created ${WORKLOADS.length} Deployments, ${POD_COUNT} pods with a zone spread; no Node can take them`,
  );

  const firstClaimAt = await waitFor(context, 'the first NodeClaim', patience(stack), () =>
    recorder.history.nodeClaims.length > 0 ? recorder.history.nodeClaims[0]!.at : undefined,
  );
  context.note(`first NodeClaim ${((firstClaimAt - started) / 1000).toFixed(1)} s after the Deployments`);
  const running = await waitFor(context, `all ${POD_COUNT} pods Running`, patience(stack, 10), () =>
    runningPods(recorder, POD_COUNT),
  );
  const allRunningAt = Date.now();

  const claims = await nodeClaimsWithNodeNames(context, () => [...recorder.nodeClaims.values()]);
  const claimNames = claims.map((c) => c.metadata.name);
  const nodeToClaim = new Map(claims.map((c) => [c.status?.nodeName ?? '', c.metadata.name]));
  const onOurNodes = running.filter((p) => nodeToClaim.has(p.spec?.nodeName ?? ''));
  const windows = metrics.count('karpenter_scheduler_scheduling_duration_seconds') - windowsBefore;
  const firstPending = recorder.history.pods[0]?.at ?? started;
  const sizes = claims.map((c) => instanceTypeOf(recorder, c));
  const vcpus = claims.reduce((sum, c) => sum + Number(c.status?.capacity?.cpu ?? 0), 0);
  const requestedCpu = WORKLOADS.reduce((sum, w) => sum + w.replicas * cpuCores(w.cpu), 0);
  const requestedGiB = WORKLOADS.reduce((sum, w) => sum + w.replicas * gibibytes(w.memory), 0);
  // The book provisioning and launch priced with (the emulator's Retail Prices API once refreshed).
  const book = app.deps.cloud.prices();
  const launchedPrice = hourlyPrice(book, sizes);
  // No hostname anti-affinity or spread: the pods force no number of nodes beyond what their requests need.
  const bound = lowerBound(await catalogOfferings(app.deps.azure), book, {
    cpu: requestedCpu,
    gib: requestedGiB,
    nodes: 0,
  });
  const provisioningMs = firstClaimAt - firstPending;
  const bindsPerClaim = new Map<string, number>();
  for (const pod of running) {
    const claim = nodeToClaim.get(pod.spec?.nodeName ?? '');
    if (claim) bindsPerClaim.set(claim, (bindsPerClaim.get(claim) ?? 0) + 1);
  }
  const marks: TimelineMark[] = [...bindsPerClaim].map(([claim, count]) => ({
    row: claim,
    at: allRunningAt,
    label: `${count} pods running`,
    kind: 'bind',
  }));

  const invariants: Invariant[] = [
    {
      name: `all ${POD_COUNT} pods go from Pending to Running`,
      holds: running.length >= POD_COUNT,
      detail: `${running.length} Running after ${((allRunningAt - started) / 1000).toFixed(1)} s`,
    },
    {
      name: 'every pod runs on a Node of a NodeClaim that provisioning created for the NodePool',
      holds:
        onOurNodes.length === running.length &&
        claims.every((c) => c.metadata.labels?.[WellKnown.nodePoolLabel] === nodePool.metadata.name),
      detail: `${onOurNodes.length}/${running.length} pods on ${claimNames.length} NodeClaims of ${nodePool.metadata.name}`,
    },
    {
      name: 'pods were batched: fewer provisioning windows than pods',
      holds: windows >= 1 && windows < POD_COUNT,
      detail: `${windows} window(s) solved for ${POD_COUNT} pods`,
    },
  ];
  const summary = [
    `pods: ${POD_COUNT} (${WORKLOADS.map((w) => `${w.replicas} × ${w.cpu}/${w.memory}`).join(', ')}), zone spread maxSkew 1`,
    `provisioning windows: ${windows}; NodeClaims: ${claims.length} (${summarize(sizes)})`,
    `first pending pod → first NodeClaim: ${(provisioningMs / 1000).toFixed(2)} s (at --speed ${stack.timings.speed}: batch idle ${1000 / stack.timings.speed} ms)`,
    `Deployments → all pods Running: ${((allRunningAt - started) / 1000).toFixed(1)} s`,
    `vCPUs launched: ${vcpus} for ${requestedCpu} requested (lower bound of capacity: ${Math.ceil(requestedCpu)} vCPUs)`,
    `price per hour launched: $${launchedPrice.toFixed(3)} (on-demand, ${book.source === 'static' ? 'shipped price table' : `Retail Prices API as of ${book.asOf}`}) against a lower bound of ` +
      `$${bound.toFixed(3)} (${(launchedPrice / bound).toFixed(2)}×): the requests priced at the catalog's best $/vCPU or $/GiB, whichever is more`,
  ];

  await deleteDeployments(context);
  await deleteNodeClaims(context, claimNames, patience(stack));
  await deleteNodePoolAndClass(context, nodePool);
  return {
    invariants,
    summary,
    marks,
    figures: {
      pods: POD_COUNT,
      windows,
      nodeClaims: claims.length,
      firstPendingToNodeClaimMs: provisioningMs,
      allRunningMs: allRunningAt - started,
      vcpusLaunched: vcpus,
      launchedPricePerHour: Number(launchedPrice.toFixed(4)),
      lowerBoundPricePerHour: Number(bound.toFixed(4)),
    },
  };
}
