// Agreement with the real kube-scheduler: a mixed workload (different requests, a zone spread, a hostname
// anti-affinity, nodeSelectors on NodePool labels, a toleration for a tainted NodePool) over two NodePools
// (one plain, one tainted with a label of its own). The provisioning simulation plans NodeClaims through the
// batcher; the real kube-scheduler then binds the pods to the Nodes that came up. What the simulation
// planned is read from its record: the `Nominated` event on each pod ("Pod should schedule on:
// nodeclaim/<name>" or "node/<name>") and the NodeClaim's karpenter.sh/nodepool label.
//
// Asserted: every pod the simulation placed on a new NodeClaim was planned on a NodePool the pod may use,
// and kube-scheduler bound it to a Node of a NodePool the simulation allows for it; the anti-affinity and
// the zone spread hold on the bound Nodes; no pod stays Pending once the Nodes are Ready. Deadlines are
// stuck detection only (the stack's patience), never timing assertions.
//
// The pods are created behind a scheduling gate and released together once all of them exist. Created
// one by one on a busy machine, the last pods could arrive after the first window's Nodes were Ready, and
// kube-scheduler would bind them straight into spare room: provisioning rightly never sees such a pod, and
// the test could not say what the simulation planned for it. A pod kube-scheduler never failed to
// schedule is still allowed to have no Nominated event, for the same reason.
//
// One race of Kubernetes itself is met here and handled as a workload's controller would: see
// `recreateStaleTaintEvictions`.
import { setTimeout as sleep } from 'node:timers/promises';
import { PatchStrategy, setHeaderOptions, type V1Pod } from '@kubernetes/client-node';
import { expect, test } from 'vitest';
import { catalogOfferings } from '../../shared/cloudprovider/catalog-offerings.js';
import { describeTaint, untoleratedTaint } from '../../shared/decisions/scheduling/taints.js';
import type { Taint } from '../../shared/models/kube.js';
import type { SchedulingPodSpec } from '../../shared/decisions/scheduling/types.js';
import { isAlreadyExists } from '../../shared/kube/errors.js';
import { WellKnown, type NodePool } from '../../shared/models/index.js';
import { functionAppOf, RUN_LABEL } from '../../local/stack/local-stack.js';
import {
  agentStartupTaint,
  exampleNodeClass,
  onDemandDFamily,
  patience,
  type Scenario,
  type ScenarioContext,
  type ScenarioOutcome,
} from '../../local/scenarios/scenario.js';
import { expectInvariantsHold, playEndToEnd } from './e2e-stack.js';

const POOL_CLASS_LABEL = 'example.com/pool-class';
const DEDICATED_TAINT = { key: 'example.com/dedicated', value: 'batch', effect: 'NoSchedule' as const };
const TOLERATION = { key: DEDICATED_TAINT.key, operator: 'Equal', value: 'batch', effect: 'NoSchedule' };
/** Holds every pod back from kube-scheduler (and so from provisioning) until all of them exist. */
const ALL_PODS_CREATED_GATE = 'example.com/all-pods-created';
const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

type PoolRole = 'plain' | 'dedicated';

interface Group {
  name: string;
  replicas: number;
  cpu: string;
  memory: string;
  /** The NodePools this group's pods may run on, by hand from their spec (the test's oracle). */
  allowed: readonly PoolRole[];
  spec(context: GroupContext): Partial<NonNullable<V1Pod['spec']>>;
}

interface GroupContext {
  labels: Record<string, string>;
  zones: readonly string[];
  poolName: (role: PoolRole) => string;
}

const GROUPS: readonly Group[] = [
  {
    name: 'spread',
    replicas: 6,
    cpu: '250m',
    memory: '512Mi',
    allowed: ['plain'],
    // minDomains: kube-scheduler counts only the zones that have Nodes; with minDomains it treats a missing
    // zone as holding 0 pods, so the spread holds however the Nodes come up one after another.
    spec: ({ labels, zones }) => ({
      topologySpreadConstraints: [
        {
          maxSkew: 1,
          minDomains: zones.length,
          topologyKey: WellKnown.zoneLabel,
          whenUnsatisfiable: 'DoNotSchedule',
          labelSelector: { matchLabels: labels },
        },
      ],
    }),
  },
  {
    name: 'anti',
    replicas: 3,
    cpu: '500m',
    memory: '1Gi',
    allowed: ['plain'],
    spec: ({ labels }) => ({
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            { topologyKey: 'kubernetes.io/hostname', labelSelector: { matchLabels: labels } },
          ],
        },
      },
    }),
  },
  {
    name: 'dedicated',
    replicas: 4,
    cpu: '1',
    memory: '2Gi',
    allowed: ['dedicated'],
    spec: () => ({ nodeSelector: { [POOL_CLASS_LABEL]: 'dedicated' }, tolerations: [TOLERATION] }),
  },
  {
    name: 'tolerant',
    replicas: 4,
    cpu: '750m',
    memory: '1536Mi',
    allowed: ['plain', 'dedicated'],
    spec: () => ({ tolerations: [TOLERATION] }),
  },
  {
    name: 'pinned',
    replicas: 3,
    cpu: '1500m',
    memory: '3Gi',
    allowed: ['plain'],
    spec: ({ poolName }) => ({ nodeSelector: { [WellKnown.nodePoolLabel]: poolName('plain') } }),
  },
];
const POD_COUNT = GROUPS.reduce((sum, g) => sum + g.replicas, 0);

function nodePool(name: string, runId: string, zones: readonly string[], role: PoolRole): NodePool {
  const dedicated = role === 'dedicated';
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, labels: { [RUN_LABEL]: runId } },
    spec: {
      disruption: { consolidateAfter: 'Never', budgets: [{ nodes: '10%' }] },
      limits: { cpu: '100' },
      template: {
        metadata: {
          labels: { [RUN_LABEL]: runId, ...(dedicated ? { [POOL_CLASS_LABEL]: 'dedicated' } : {}) },
        },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name },
          ...(dedicated ? { taints: [DEDICATED_TAINT] } : {}),
          startupTaints: [agentStartupTaint],
          expireAfter: 'Never',
          requirements: [
            ...onDemandDFamily(5),
            { key: WellKnown.zoneLabel, operator: 'In', values: [...zones] },
          ],
        },
      },
    },
  };
}

function pod(group: Group, index: number, runId: string, context: GroupContext): V1Pod {
  const spec = group.spec(context);
  // The run id in the name: each e2e stack's bridge forwards only the objects whose name carries it. And a
  // nodeSelector on the run's NodePool label: other e2e files share this control plane, and kube-scheduler
  // would rightly bind a pod to their Nodes, which are no part of this run's plan.
  return {
    metadata: { name: `${group.name}-${index}-${runId}`, labels: context.labels },
    spec: {
      terminationGracePeriodSeconds: 1,
      schedulingGates: [{ name: ALL_PODS_CREATED_GATE }],
      ...spec,
      nodeSelector: { [RUN_LABEL]: runId, ...spec.nodeSelector },
      containers: [
        {
          name: 'app',
          image: 'registry.k8s.io/pause:3.10',
          resources: { requests: { cpu: group.cpu, memory: group.memory } },
        },
      ],
    },
  };
}

/** Where the simulation planned each pod: every `Nominated` target, in the order recorded. */
async function nominations(context: ScenarioContext): Promise<Map<string, string[]>> {
  const events = await eventsOfReason(context, 'Nominated');
  const planned = new Map<string, string[]>();
  for (const event of events.items) {
    const target = /^Pod should schedule on: (.+)$/.exec(event.message ?? '')?.[1];
    const podName = event.involvedObject.name;
    if (!target || !podName) continue;
    planned.set(podName, [...(planned.get(podName) ?? []), target]);
  }
  return planned;
}

/** The pods kube-scheduler once found no Node for (its FailedScheduling events): provisioning's to place. */
async function unschedulablePods(context: ScenarioContext): Promise<Set<string>> {
  const events = await eventsOfReason(context, 'FailedScheduling');
  return new Set(events.items.map((event) => event.involvedObject.name ?? ''));
}

function eventsOfReason(context: ScenarioContext, reason: string) {
  return context.core.listNamespacedEvent({
    namespace: context.namespace,
    fieldSelector: `reason=${reason}`,
  });
}

/**
 * Polls the API server (not the scenario recorder's watches: a stalled watch under load must not read as
 * stuck pods) until `probe` returns a value; the deadline only detects a stuck system.
 */
async function pollApi<T>(
  context: ScenarioContext,
  what: string,
  timeoutMs: number,
  probe: () => Promise<T | undefined>,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined) return value;
    if (context.signal.aborted) throw new Error(`cancelled while waiting for ${what}`);
    if (Date.now() > deadline)
      throw new Error(`timed out after ${Math.round(timeoutMs / 1000)} s waiting for ${what}`);
    await sleep(1_000);
  }
}

/**
 * kube-controller-manager's taint-eviction controller judges a newly bound pod by its own informer's copy
 * of the Node. When a NoExecute taint is removed (here the agent's startup taint, removed as cilium removes
 * its own) and kube-scheduler binds a pod at once, that copy can still carry the taint, and the controller
 * deletes the pod at once. This is a known race in Kubernetes itself, seen on busy clusters, and this
 * stack reproduces it faithfully on a loaded machine. A workload's controller would create the pod again;
 * these bare pods have none, so the test does what a ReplicaSet would, but only when the scenario
 * recorder's history of the Node shows that race: every NoExecute taint the pod does not tolerate was gone
 * for good once removed (kube-scheduler, which checks NoExecute too, bound it after that). A pod evicted
 * from a Node whose taint came back fails the test with the Node's taint history: that would be a bug in
 * registration or in the simulated agent, not the race.
 *
 * Returns a line for each pod created again; `current` follows each name to its newest incarnation.
 */
async function recreateStaleTaintEvictions(
  context: ScenarioContext,
  bodies: ReadonlyMap<string, V1Pod>,
  current: Map<string, V1Pod>,
  present: ReadonlySet<string>,
): Promise<string[]> {
  const gone = [...current.keys()].filter((name) => !present.has(name));
  if (gone.length === 0) return [];
  const evictions = (await eventsOfReason(context, 'TaintManagerEviction')).items;
  const bindings = (await eventsOfReason(context, 'Scheduled')).items;
  const lines: string[] = [];
  for (const name of gone) {
    const pod = current.get(name)!;
    const uid = pod.metadata?.uid;
    if (!evictions.some((e) => e.involvedObject.uid === uid)) continue;
    const binding = bindings.find((e) => e.involvedObject.uid === uid);
    const nodeName = / to (\S+)$/.exec(binding?.message ?? '')?.[1] ?? '';
    const tolerations = (pod.spec as unknown as SchedulingPodSpec | undefined)?.tolerations;
    const repellingOf = (taints: readonly Taint[] | undefined) =>
      (taints ?? []).filter(
        (taint) => taint.effect === 'NoExecute' && untoleratedTaint([taint], tolerations) !== undefined,
      );
    const versions = context.recorder.history.nodes
      .filter((seen) => seen.object.metadata.name === nodeName)
      .map((seen) => ({
        resourceVersion: seen.object.metadata.resourceVersion ?? '?',
        repelling: repellingOf(seen.object.spec?.taints),
      }));
    if (nodeName && versions.every((v) => v.repelling.length > 0)) {
      // On a loaded machine the recorder's watch can lag the API server by more than the wait: the Node as
      // the API server has it now is the newest version, and as good a witness of the taints being gone.
      const live = await context.core.readNode({ name: nodeName }).catch(() => undefined);
      if (live?.metadata?.resourceVersion !== undefined)
        versions.push({
          resourceVersion: live.metadata.resourceVersion,
          repelling: repellingOf(live.spec?.taints as Taint[] | undefined),
        });
    }
    const firstClear = versions.findIndex((v) => v.repelling.length === 0);
    if (firstClear >= 0 && versions.slice(firstClear).some((v) => v.repelling.length > 0)) {
      const history = versions
        .map((v) => `rv ${v.resourceVersion}: [${v.repelling.map(describeTaint).join(', ')}]`)
        .join(' → ');
      throw new Error(
        `${name} was bound to ${nodeName || '?'} and deleted by the taint-eviction controller, and a NoExecute ` +
          `taint the pod does not tolerate came back to the Node after they were all gone: ${history}`,
      );
    }
    // The recorder's watch may not have delivered the Node's last versions yet: look again next poll (a
    // Node that truly keeps the taint leaves the pod gone, and the wait's deadline reports it).
    if (firstClear < 0) continue;
    const removed = [...new Set(versions.flatMap((v) => v.repelling.map(describeTaint)))];
    const again = await context.core
      .createNamespacedPod({ namespace: context.namespace, body: bodies.get(name)! })
      .catch((error: unknown) => {
        // The deleted pod may still be in the API server's way for a moment; the next poll tries again.
        if (isAlreadyExists(error)) return undefined;
        throw error;
      });
    if (!again) continue;
    current.set(name, again);
    lines.push(
      `${name} created again: the taint-eviction controller deleted it from ${nodeName} on a stale view ` +
        `(${removed.join(', ') || 'its NoExecute taint'} was gone for good before kube-scheduler bound it)`,
    );
  }
  return lines;
}

/** The pods not Running, why kube-scheduler left them, and where the simulation planned them. */
async function stuckEvidence(
  context: ScenarioContext,
  claimNames: readonly string[],
  expected: readonly string[],
): Promise<string> {
  const pods = await context.core.listNamespacedPod({ namespace: context.namespace });
  const planned = await nominations(context);
  const stuck = pods.items
    .filter((p) => p.status?.phase !== 'Running')
    .map((p) => {
      const scheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled');
      const name = p.metadata?.name ?? '?';
      return (
        `${name} ${p.status?.phase ?? '?'} on ${p.spec?.nodeName ?? '-'} ` +
        `(${scheduled?.reason ?? ''} ${scheduled?.message ?? ''}) planned ${(planned.get(name) ?? []).join(',') || '-'}`
      );
    });
  const present = new Set(pods.items.map((p) => p.metadata?.name ?? ''));
  const gone = expected.filter((name) => !present.has(name));
  const events = (await context.core.listNamespacedEvent({ namespace: context.namespace })).items
    .filter((e) => gone.includes(e.involvedObject.name ?? '') && e.reason !== 'Nominated')
    .map((e) => `${e.involvedObject.name}: ${e.reason} ${e.message ?? ''} (${e.source?.component ?? '?'})`);
  return (
    `NodeClaims ${claimNames.join(', ') || 'none'}; not Running: ${stuck.join('; ') || 'none'}; ` +
    `gone: ${gone.join(', ') || 'none'}; their events: ${events.join('; ') || 'none'}`
  );
}

async function play(context: ScenarioContext): Promise<ScenarioOutcome> {
  const { stack, runId, namespace } = context;
  const runSelector = `${RUN_LABEL}=${runId}`;
  const app = functionAppOf(stack);
  const objects = stack.admin.objects;
  const offerings = await catalogOfferings(app.deps.azure);
  // Three zones of the emulated region where the pools' D-family sizes are offered.
  const zones = [
    ...new Set(
      offerings
        .filter((o) => o.zoneNumber !== undefined && o.vmSize.startsWith('Standard_D'))
        .map((o) => o.zone),
    ),
  ]
    .sort()
    .slice(0, 3);
  const poolNames: Record<PoolRole, string> = {
    plain: `agree-plain-${runId}`,
    dedicated: `agree-dedicated-${runId}`,
  };
  const nodeClasses = Object.values(poolNames).map((name) => exampleNodeClass(name, runId));
  const nodePools = (Object.keys(poolNames) as PoolRole[]).map((role) =>
    nodePool(poolNames[role], runId, zones, role),
  );
  for (const nodeClass of nodeClasses) await objects.nodeClasses.create(nodeClass);
  for (const pool of nodePools) await objects.nodePools.create(pool);

  const groupOf = new Map<string, Group>();
  /** Each pod as created (the admitted incarnation: its uid and tolerations), and its ungated body. */
  const current = new Map<string, V1Pod>();
  const ungated = new Map<string, V1Pod>();
  for (const group of GROUPS) {
    const labels = { group: `${group.name}-${runId}`, [RUN_LABEL]: runId };
    const groupContext: GroupContext = { labels, zones, poolName: (role) => poolNames[role] };
    for (let index = 0; index < group.replicas; index++) {
      const body = pod(group, index, runId, groupContext);
      const name = body.metadata!.name!;
      groupOf.set(name, group);
      current.set(name, await context.core.createNamespacedPod({ namespace, body }));
      ungated.set(name, { ...body, spec: { ...body.spec!, schedulingGates: [] } });
    }
  }
  // Released together (gates can only be removed): no Node of this run exists yet, so every pod is
  // unschedulable at first and provisioning plans all of them.
  await Promise.all(
    [...groupOf.keys()].map((name) =>
      context.core.patchNamespacedPod(
        { name, namespace, body: { spec: { schedulingGates: null } } },
        mergePatch,
      ),
    ),
  );
  context.note(
    `created ${POD_COUNT} pods in ${GROUPS.length} groups over zones ${zones.join(', ')}, released together`,
  );

  const createdAgain: string[] = [];
  const running = await pollApi(context, `all ${POD_COUNT} pods Running`, patience(stack, 10), async () => {
    const pods = (await context.core.listNamespacedPod({ namespace, labelSelector: runSelector })).items;
    const present = new Set(pods.map((p) => p.metadata?.name ?? ''));
    for (const line of await recreateStaleTaintEvictions(context, ungated, current, present)) {
      context.note(line);
      createdAgain.push(line);
    }
    // A pod being deleted can still read Running; it is not one of the pods that stay.
    const runningPods = pods.filter(
      (p) =>
        groupOf.has(p.metadata?.name ?? '') &&
        p.status?.phase === 'Running' &&
        !p.metadata?.deletionTimestamp,
    );
    return runningPods.length === POD_COUNT ? runningPods : undefined;
  }).catch(async (error: unknown) => {
    const claimNames = (await objects.nodeClaims.list({ labelSelector: runSelector })).map(
      (c) => c.metadata.name,
    );
    throw new Error(`${String(error)}; ${await stuckEvidence(context, claimNames, [...groupOf.keys()])}`);
  });
  const planned = await nominations(context);
  const failedToSchedule = await unschedulablePods(context);

  const claims = await objects.nodeClaims.list({ labelSelector: runSelector });
  const nodes = new Map(
    (await context.core.listNode({ labelSelector: runSelector })).items.map((n) => [
      n.metadata?.name ?? '',
      n,
    ]),
  );
  const claimPool = new Map(
    claims.map((c) => [c.metadata.name, c.metadata.labels?.[WellKnown.nodePoolLabel]]),
  );
  const roleOfPool = new Map((Object.keys(poolNames) as PoolRole[]).map((role) => [poolNames[role], role]));
  const nodeLabels = (nodeName: string | undefined) => nodes.get(nodeName ?? '')?.metadata?.labels ?? {};

  const violations: string[] = [];
  const placedOnNewClaims: string[] = [];
  for (const view of running) {
    const name = view.metadata?.name ?? '';
    const group = groupOf.get(name)!;
    const targets = planned.get(name) ?? [];
    if (targets.length === 0 && failedToSchedule.has(name))
      violations.push(`${name}: no Nominated event (the simulation never placed it)`);
    for (const target of targets) {
      const claimName = target.startsWith('nodeclaim/') ? target.slice('nodeclaim/'.length) : undefined;
      if (claimName === undefined) continue;
      const role = roleOfPool.get(claimPool.get(claimName) ?? '');
      if (role === undefined || !group.allowed.includes(role))
        violations.push(`${name}: planned on ${target} of NodePool ${claimPool.get(claimName) ?? '?'}`);
      else placedOnNewClaims.push(name);
    }
    const boundPool = nodeLabels(view.spec?.nodeName)[WellKnown.nodePoolLabel] ?? '';
    const boundRole = roleOfPool.get(boundPool);
    if (boundRole === undefined || !group.allowed.includes(boundRole))
      violations.push(`${name}: bound to ${view.spec?.nodeName ?? '?'} of NodePool ${boundPool || '?'}`);
  }

  // Not asserted (kube-scheduler may pick any Node that fits): how often it chose the very NodeClaim planned.
  const claimOfNode = new Map(claims.map((c) => [c.status?.nodeName ?? '', c.metadata.name]));
  const onPlannedClaim = running.filter((view) =>
    (planned.get(view.metadata?.name ?? '') ?? []).includes(
      `nodeclaim/${claimOfNode.get(view.spec?.nodeName ?? '')}`,
    ),
  ).length;
  const podsOf = (groupName: string) =>
    running.filter((p) => groupOf.get(p.metadata?.name ?? '')?.name === groupName);
  const antiNodes = podsOf('anti').map((p) => p.spec?.nodeName ?? '');
  const zoneCounts = new Map(zones.map((zone) => [zone, 0]));
  for (const view of podsOf('spread')) {
    const zone = nodeLabels(view.spec?.nodeName)[WellKnown.zoneLabel] ?? '?';
    zoneCounts.set(zone, (zoneCounts.get(zone) ?? 0) + 1);
  }
  const counts = [...zoneCounts.values()];
  const skew = Math.max(...counts) - Math.min(...counts);
  const pending = (
    await context.core.listNamespacedPod({ namespace, labelSelector: runSelector })
  ).items.filter((p) => p.status?.phase !== 'Running');
  const claimNames = claims.map((c) => c.metadata.name);

  await Promise.all(
    [...groupOf.keys()].map((name) =>
      context.core.deleteNamespacedPod({ namespace, name }).catch(() => undefined),
    ),
  );
  await Promise.all(claimNames.map((name) => objects.nodeClaims.delete(name)));
  await pollApi(context, 'the NodeClaims to be terminated', patience(stack), async () =>
    (await objects.nodeClaims.list({ labelSelector: runSelector })).length === 0 ? true : undefined,
  );
  for (const pool of nodePools) await objects.nodePools.delete(pool.metadata.name);
  for (const nodeClass of nodeClasses) await objects.nodeClasses.delete(nodeClass.metadata.name);

  return {
    invariants: [
      {
        name: 'every pod is planned and bound on a NodePool the simulation allows for it',
        holds: violations.length === 0 && placedOnNewClaims.length > 0,
        detail:
          violations.length > 0
            ? violations.join('; ')
            : `${new Set(placedOnNewClaims).size}/${POD_COUNT} pods placed on new NodeClaims, all bound within their NodePools`,
      },
      {
        name: 'hostname anti-affinity holds: one anti-affine pod per Node',
        holds: new Set(antiNodes).size === antiNodes.length,
        detail: `anti-affine pods on ${antiNodes.join(', ')}`,
      },
      {
        name: 'zone spread holds: maxSkew 1 across the NodePool zones',
        holds: skew <= 1,
        detail: [...zoneCounts].map(([zone, count]) => `${zone}: ${count}`).join(', '),
      },
      {
        name: 'no pod stays Pending once the Nodes are Ready',
        holds: pending.length === 0,
        detail: `${POD_COUNT - pending.length}/${POD_COUNT} Running`,
      },
    ],
    summary: [
      `pods: ${POD_COUNT} in ${GROUPS.map((g) => `${g.replicas} ${g.name}`).join(', ')}`,
      `NodeClaims: ${claims.length} (${nodePools
        .map(
          (p) =>
            `${claims.filter((c) => claimPool.get(c.metadata.name) === p.metadata.name).length} of ${p.metadata.name}`,
        )
        .join(', ')})`,
      `bound to the very NodeClaim the simulation planned: ${onPlannedClaim}/${POD_COUNT}`,
      `spread pods per zone: ${[...zoneCounts].map(([zone, count]) => `${zone} ${count}`).join(', ')}`,
      ...createdAgain,
    ],
    marks: [],
    figures: { pods: POD_COUNT, nodeClaims: claims.length, onPlannedClaim },
  };
}

const schedulerAgreement: Scenario = {
  name: 'scheduler-agreement',
  title: 'the provisioning simulation agrees with the real kube-scheduler',
  description:
    'A mixed workload over a plain and a tainted NodePool: the simulation plans NodeClaims, kube-scheduler binds ' +
    'every pod to a Node of a NodePool the simulation allows for it, and the constraints hold on the bound Nodes.',
  usesPods: true,
  play,
};

test(
  'kube-scheduler binds every pod the simulation planned within the NodePools it allowed',
  { timeout: 400_000 },
  async () => {
    const report = await playEndToEnd(schedulerAgreement);
    expectInvariantsHold(report);
    expect(report.outcome.figures.nodeClaims).toBeGreaterThan(0);
  },
);
