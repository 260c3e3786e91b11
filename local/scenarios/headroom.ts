// headroom: a CapacityBuffer (autoscaling.x-k8s.io/v1beta1, gate CapacityBuffer) keeps spare capacity so a
// burst does not wait for a VM. First the burst without a buffer, for comparison: 4 pods of (1 CPU, 2 GiB)
// pend until provisioning has launched a node for them. Then a buffer of 4 such chunks: its virtual pods
// join the provisioning solve, a warm node is launched for them with no pod pending, and it stays while
// consolidation (WhenEmptyOrUnderutilized after 0 s) would otherwise delete it as empty. The same burst
// then lands on the warm node at once, and the next solve refills the buffer with a new node.
import {
  CustomObjectsApi,
  KubeConfig,
  type V1Deployment,
  type V1PodTemplateSpec,
} from '@kubernetes/client-node';
import { CapacityBufferConditionTypes } from '../../shared/decisions/capacity-buffers.js';
import { isConditionTrue } from '../../shared/decisions/conditions.js';
import { CapacityBufferResource, apiVersionOf } from '../../shared/kube/crd-names.js';
import type { CapacityBuffer } from '../../shared/models/capacity-buffer.js';
import { WellKnown, type NodeClaim } from '../../shared/models/index.js';
import { RUN_LABEL } from '../stack/local-stack.js';
import type { TimelineMark } from '../view/timeline-svg.js';
import { dynamicNodePool, runningPods } from './deployment-set.js';
import {
  claimsOfPool,
  createNodeClassAndPool,
  deleteNodeClaims,
  deleteNodePoolAndClass,
  patience,
  waitFor,
  type Invariant,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from './scenario.js';

const CHUNKS = 4;
const CHUNK = { cpu: '1', memory: '2Gi' };
/** Sweeps the warm node must outlive with consolidation on before the burst. */
const KEPT_SWEEPS = 3;

export const headroom: Scenario = {
  name: 'headroom',
  title: `headroom: a CapacityBuffer of ${CHUNKS} × (${CHUNK.cpu} CPU, ${CHUNK.memory}) keeps a warm node`,
  description:
    `The same burst of ${CHUNKS} pods (${CHUNK.cpu} CPU / ${CHUNK.memory}) twice: first with nothing running, ` +
    `then beside a CapacityBuffer of ${CHUNKS} such chunks, whose virtual pods join every provisioning solve. ` +
    'The buffer keeps a warm node that consolidation leaves alone; the burst runs on it without waiting for a VM ' +
    '(both times printed), and the next solve refills the buffer with a new node.',
  usesPods: true,
  play,
};

function podTemplate(runId: string, app: string, nodePool: string): V1PodTemplateSpec {
  return {
    metadata: { labels: { app, [RUN_LABEL]: runId } },
    spec: {
      terminationGracePeriodSeconds: 1,
      nodeSelector: { [WellKnown.nodePoolLabel]: nodePool },
      containers: [{ name: 'app', image: 'registry.k8s.io/pause:3.10', resources: { requests: CHUNK } }],
    },
  };
}

function burst(runId: string, name: string, nodePool: string): V1Deployment {
  const template = podTemplate(runId, name, nodePool);
  return {
    metadata: { name },
    spec: { replicas: CHUNKS, selector: { matchLabels: { app: name } }, template },
  };
}

/** The burst's pods, once all are Running, with the time that was first seen. */
async function burstRunning(context: ScenarioContext, app: string, timeoutMs: number) {
  const pods = await waitFor(context, `the ${CHUNKS} pods of ${app} Running`, timeoutMs, () => {
    const running = runningPods(context.recorder, 0)?.filter((p) => p.metadata.labels?.['app'] === app);
    return running && running.length >= CHUNKS ? running : undefined;
  });
  return { pods, at: Date.now() };
}

/** Polls the API (the recorder does not watch buffers) until the buffer satisfies `accept`. */
async function bufferUntil(
  context: ScenarioContext,
  custom: CustomObjectsApi,
  name: string,
  what: string,
  accept: (buffer: CapacityBuffer) => boolean,
): Promise<CapacityBuffer> {
  const deadline = Date.now() + patience(context.stack);
  let last: CapacityBuffer | undefined;
  for (;;) {
    last = (await custom.getNamespacedCustomObject({
      group: CapacityBufferResource.group,
      version: CapacityBufferResource.version,
      plural: CapacityBufferResource.plural,
      namespace: context.namespace,
      name,
    })) as CapacityBuffer;
    if (accept(last)) return last;
    if (context.signal.aborted) throw new Error(`cancelled while waiting for ${what}`);
    if (Date.now() > deadline) {
      throw new Error(`timed out waiting for ${what}: ${JSON.stringify(last.status ?? {})}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
}

const provisioned = (buffer: CapacityBuffer): boolean =>
  isConditionTrue(buffer.status?.conditions, CapacityBufferConditionTypes.provisioning);

/** NodeClaims of the pool whose Node is up and initialized (pods can bind there). */
function initializedClaims(context: ScenarioContext, nodePool: string): NodeClaim[] {
  return claimsOfPool(context.recorder, nodePool).filter((c) => {
    const node = context.recorder.nodes.get(c.status?.nodeName ?? '');
    return node?.metadata.labels?.[WellKnown.initializedLabel] === 'true' && !c.metadata.deletionTimestamp;
  });
}

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, recorder, runId, namespace } = context;
  const config = new KubeConfig();
  config.loadFromFile(stack.kubeconfigPath);
  const custom = config.makeApiClient(CustomObjectsApi);
  const name = `headroom-${runId}`;
  const nodePool = dynamicNodePool(name, runId, {
    consolidationPolicy: 'WhenEmptyOrUnderutilized',
    consolidateAfter: '0s',
    budgets: [{ nodes: '100%' }],
  });
  await createNodeClassAndPool(context, nodePool);
  const marks: TimelineMark[] = [];

  // 1. The burst with nothing running: it waits for provisioning and a VM.
  const coldName = `cold-${runId}`;
  const coldStarted = Date.now();
  await context.apps.createNamespacedDeployment({ namespace, body: burst(runId, coldName, name) });
  context.note(`burst of ${CHUNKS} pods without a buffer: they pend until a node is launched for them`);
  const cold = await burstRunning(context, coldName, patience(stack, 10));
  const coldMs = cold.at - coldStarted;
  const coldClaims = claimsOfPool(recorder, name).map((c) => c.metadata.name);
  context.note(
    `cold burst Running after ${(coldMs / 1000).toFixed(1)} s on ${coldClaims.length} new node(s)`,
  );
  for (const claim of coldClaims)
    marks.push({ row: claim, at: cold.at, label: 'cold burst running', kind: 'bind' });
  await context.apps.deleteNamespacedDeployment({ namespace, name: coldName });
  await deleteNodeClaims(context, coldClaims, patience(stack));

  // 2. The buffer: a PodTemplate of the same shape and a CapacityBuffer of 4 chunks.
  const templateName = `chunk-${runId}`;
  await context.core.createNamespacedPodTemplate({
    namespace,
    body: { metadata: { name: templateName }, template: podTemplate(runId, `buffer-${runId}`, name) },
  });
  const bufferName = `buffer-${runId}`;
  const bufferBody: CapacityBuffer = {
    apiVersion: apiVersionOf(CapacityBufferResource),
    kind: CapacityBufferResource.kind,
    metadata: { name: bufferName, namespace },
    spec: { podTemplateRef: { name: templateName }, replicas: CHUNKS },
  };
  const bufferStarted = Date.now();
  await custom.createNamespacedCustomObject({
    group: CapacityBufferResource.group,
    version: CapacityBufferResource.version,
    plural: CapacityBufferResource.plural,
    namespace,
    body: bufferBody,
  });
  context.note(
    `CapacityBuffer ${bufferName}: ${CHUNKS} × (${CHUNK.cpu} CPU, ${CHUNK.memory}), no pod pending`,
  );
  const ready = await bufferUntil(context, custom, bufferName, 'ReadyForProvisioning', (b) =>
    isConditionTrue(b.status?.conditions, CapacityBufferConditionTypes.readyForProvisioning),
  );
  // The solve may spread the buffer over more than one node (the cost packer prices a D4 and a D2 below
  // one D8 for 4 × 1 CPU), so the warm capacity is every NodeClaim the buffer launched, once all are up.
  const warm = await waitFor(context, 'the warm node(s) for the buffer', patience(stack), () => {
    const launched = claimsOfPool(recorder, name).filter((c) => !c.metadata.deletionTimestamp);
    const up = initializedClaims(context, name);
    return launched.length > 0 && up.length === launched.length ? up : undefined;
  });
  await bufferUntil(context, custom, bufferName, 'Provisioning=True', provisioned);
  const warmMs = Date.now() - bufferStarted;
  const warmClaims = warm.map((c) => c.metadata.name);
  const warmNodes = new Set(warm.map((c) => c.status?.nodeName ?? ''));
  context.note(`warm node(s) ${warmClaims.join(', ')} up ${(warmMs / 1000).toFixed(1)} s after the buffer`);
  for (const claim of warmClaims)
    marks.push({ row: claim, at: Date.now(), label: 'warm, empty', kind: 'note' });

  // Consolidation after 0 s would delete an empty node within a validation delay; the warm node stays.
  const t = stack.timings;
  const keepMs = t.consolidationValidationSeconds * 1000 + KEPT_SWEEPS * t.sweepPeriodSeconds * 1000;
  context.note(`waiting ${(keepMs / 1000).toFixed(0)} s: consolidation is on and the warm node is empty`);
  await new Promise((resolve) => setTimeout(resolve, keepMs));
  const keptClaims = warmClaims.filter((n) => {
    const claim = recorder.nodeClaims.get(n);
    return claim && !claim.metadata.deletionTimestamp;
  });
  const everDeleted = recorder.history.nodeClaims.some(
    (e) =>
      warmClaims.includes(e.object.metadata.name) &&
      (e.type === 'DELETED' || e.object.metadata.deletionTimestamp),
  );

  // 3. The same burst beside the buffer: it runs on the warm node at once.
  const claimsBeforeBurst = new Set(claimsOfPool(recorder, name).map((c) => c.metadata.name));
  const hotName = `burst-${runId}`;
  const hotStarted = Date.now();
  await context.apps.createNamespacedDeployment({ namespace, body: burst(runId, hotName, name) });
  context.note(`the same burst beside the buffer`);
  const hot = await burstRunning(context, hotName, patience(stack));
  const hotMs = hot.at - hotStarted;
  const onWarm = hot.pods.filter((p) => warmNodes.has(p.spec?.nodeName ?? ''));
  context.note(
    `burst Running after ${(hotMs / 1000).toFixed(1)} s, ${onWarm.length}/${CHUNKS} on the warm node(s)`,
  );
  for (const claim of warmClaims)
    marks.push({ row: claim, at: hot.at, label: 'burst running', kind: 'bind' });

  // 4. The refill: a new node for the buffer, and Provisioning=True once its virtual pods fit again.
  const refill = await waitFor(context, 'the buffer refilled on a new node', patience(stack), () => {
    const fresh = initializedClaims(context, name).filter((c) => !claimsBeforeBurst.has(c.metadata.name));
    return fresh.length > 0 ? fresh : undefined;
  });
  const refilled = await bufferUntil(
    context,
    custom,
    bufferName,
    'Provisioning=True after the refill',
    provisioned,
  );
  const refillMs = Date.now() - hot.at;
  const refillClaims = refill.map((c) => c.metadata.name);
  context.note(
    `buffer refilled on ${refillClaims.join(', ')} ${(refillMs / 1000).toFixed(1)} s after the burst`,
  );
  for (const claim of refillClaims) marks.push({ row: claim, at: Date.now(), label: 'refill', kind: 'note' });
  const virtualPodObjects = [...recorder.history.pods].filter((e) =>
    e.object.metadata.name.startsWith('capacity-buffer-'),
  ).length;

  const invariants: Invariant[] = [
    {
      name: 'the buffer resolves: ReadyForProvisioning=True with 4 replicas',
      holds: ready.status?.replicas === CHUNKS,
      detail: `status.replicas ${ready.status?.replicas ?? 'unset'}`,
    },
    {
      name: 'without a buffer the burst waits for a new node',
      holds: coldClaims.length > 0,
      detail: `${coldClaims.length} NodeClaim(s) launched for it; Running after ${(coldMs / 1000).toFixed(1)} s`,
    },
    {
      name: `the buffer keeps a warm node with no pod on it, through ${KEPT_SWEEPS} sweeps past consolidation's validation`,
      holds: warmClaims.length > 0 && keptClaims.length === warmClaims.length && !everDeleted,
      detail: `${keptClaims.length}/${warmClaims.length} warm NodeClaim(s) kept for ${(keepMs / 1000).toFixed(0)} s with consolidateAfter 0s`,
    },
    {
      name: 'the burst beside the buffer runs on the warm node(s), without waiting for a VM',
      holds: onWarm.length === CHUNKS,
      detail: `${onWarm.length}/${CHUNKS} pods on ${[...warmNodes].join(', ')}`,
    },
    {
      name: 'the burst is faster with the buffer',
      holds: hotMs < coldMs,
      detail: `${(hotMs / 1000).toFixed(1)} s with the buffer, ${(coldMs / 1000).toFixed(1)} s without`,
    },
    {
      name: 'the buffer is refilled by a new node and is Provisioning=True again',
      holds: refillClaims.length > 0 && provisioned(refilled),
      detail: `${refillClaims.join(', ')}: ${refilled.status?.conditions?.find((c) => c.type === 'Provisioning')?.message ?? ''}`,
    },
    {
      name: 'virtual pods exist only in the solve: no Pod object is ever made for them',
      holds: virtualPodObjects === 0,
      detail: `${virtualPodObjects} Pod events named capacity-buffer-*`,
    },
  ];
  const summary = [
    `burst: ${CHUNKS} pods × (${CHUNK.cpu} CPU, ${CHUNK.memory})`,
    `without a buffer: Running after ${(coldMs / 1000).toFixed(1)} s (waited for ${coldClaims.length} new node(s))`,
    `with a buffer of ${CHUNKS} chunks: Running after ${(hotMs / 1000).toFixed(1)} s on the ${warmClaims.length} warm node(s) (${(coldMs / Math.max(hotMs, 1)).toFixed(1)}× faster)`,
    `warm node up ${(warmMs / 1000).toFixed(1)} s after the buffer was created; kept ${(keepMs / 1000).toFixed(0)} s with consolidation on`,
    `refilled ${(refillMs / 1000).toFixed(1)} s after the burst was Running (${refillClaims.length} new node(s))`,
  ];

  await context.apps.deleteNamespacedDeployment({ namespace, name: hotName }).catch(() => undefined);
  await custom
    .deleteNamespacedCustomObject({
      group: CapacityBufferResource.group,
      version: CapacityBufferResource.version,
      plural: CapacityBufferResource.plural,
      namespace,
      name: bufferName,
    })
    .catch(() => undefined);
  await context.core.deleteNamespacedPodTemplate({ namespace, name: templateName }).catch(() => undefined);
  await deleteNodeClaims(
    context,
    claimsOfPool(recorder, name).map((c) => c.metadata.name),
    patience(stack),
  );
  await deleteNodePoolAndClass(context, nodePool);
  return {
    invariants,
    summary,
    marks,
    figures: {
      chunks: CHUNKS,
      coldBurstMs: coldMs,
      bufferedBurstMs: hotMs,
      warmNodeMs: warmMs,
      keptMs: keepMs,
      refillMs,
    },
  };
}
