// What a reference scenario is, and the helpers every scenario uses to create its objects and wait for
// the system to act. A scenario drives the cluster only through the Kubernetes API and the emulator's
// controls, as a person would with kubectl and curl; the system under test is the running stack.
import { AppsV1Api, CoreV1Api, KubeConfig } from '@kubernetes/client-node';
import type { AKSNodeClass, NodeClaim, NodePool } from '../../shared/models/index.js';
import { WellKnown } from '../../shared/models/index.js';
import { AGENT_STARTUP_TAINT, RUN_LABEL, type LocalStack } from '../stack/local-stack.js';
import type { Recorder } from '../view/recorder.js';
import type { TimelineMark } from '../view/timeline-svg.js';

export interface Invariant {
  name: string;
  holds: boolean;
  detail: string;
}

export interface ScenarioOutcome {
  invariants: Invariant[];
  /** Lines for the one-screen summary. */
  summary: string[];
  marks: TimelineMark[];
  /** Figures worth keeping (JSON in the results folder). */
  figures: Record<string, number | string>;
  /** The scenario's own picture: written as `<scenario>.svg`, the NodeClaim timeline then beside it. */
  picture?: string;
  /** More data for the JSON in the results folder (series, the plan). */
  data?: Record<string, unknown>;
}

export interface ScenarioContext {
  stack: LocalStack;
  recorder: Recorder;
  core: CoreV1Api;
  apps: AppsV1Api;
  runId: string;
  /** Namespace for the scenario's pods (created by the runner when the scenario has pods). */
  namespace: string;
  /** A line for the live view and the log. */
  note(line: string): void;
  /** Rejects when the run is cancelled (Ctrl-C). */
  signal: AbortSignal;
  /** Where the run's results go, when it has a folder (a scenario may keep its own logs there). */
  resultsDirectory?: string;
}

export interface Scenario {
  name: string;
  title: string;
  /** One paragraph for --help and the README. */
  description: string;
  /** Whether the scenario needs a namespace for pods. */
  usesPods: boolean;
  /**
   * The scenario runs the Function App itself (in a process it can kill), so the stack must start
   * without the in-process host and with a control plane of its own.
   */
  ownFunctionHost?: boolean;
  /** The scenario grows the cluster to hundreds of nodes: the stack starts with `clusterScale`. */
  clusterScale?: boolean;
  play(context: ScenarioContext): Promise<ScenarioOutcome>;
}

export function kubeApis(kubeconfigPath: string): { core: CoreV1Api; apps: AppsV1Api } {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  return { core: config.makeApiClient(CoreV1Api), apps: config.makeApiClient(AppsV1Api) };
}

/** NodePool requirements for on-demand amd64 D-family sizes of fewer than `cpuBelow` vCPUs. */
export function onDemandDFamily(cpuBelow: number): NodePool['spec']['template']['spec']['requirements'] {
  return [
    { key: 'kubernetes.io/arch', operator: 'In', values: ['amd64'] },
    { key: 'karpenter.sh/capacity-type', operator: 'In', values: ['on-demand'] },
    { key: 'karpenter.azure.com/sku-family', operator: 'In', values: ['D'] },
    { key: 'karpenter.azure.com/sku-cpu', operator: 'Lt', values: [String(cpuBelow)] },
  ];
}

/** The requirements of the example NodePool (test/fixtures/general-purpose.yaml). */
export const exampleRequirements = onDemandDFamily(3);

export const agentStartupTaint = { key: AGENT_STARTUP_TAINT, value: 'true', effect: 'NoExecute' as const };

export function exampleNodeClass(name: string, runId: string): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name, labels: { [RUN_LABEL]: runId } },
    spec: { imageFamily: 'Ubuntu2204' },
  };
}

export function exampleNodePool(name: string, runId: string, nodeClassName: string, budget = '5'): NodePool {
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, labels: { [RUN_LABEL]: runId } },
    spec: {
      disruption: { consolidateAfter: 'Never', budgets: [{ nodes: budget }] },
      template: {
        metadata: { labels: { 'kubernetes.azure.com/ebpf-dataplane': 'cilium', [RUN_LABEL]: runId } },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name: nodeClassName },
          startupTaints: [agentStartupTaint],
          expireAfter: 'Never',
          requirements: exampleRequirements,
        },
      },
    },
  };
}

/**
 * Creates the scenario's NodePool and the example AKSNodeClass it refers to (each scenario names the two
 * alike), the class first so the pool is never without it.
 */
export async function createNodeClassAndPool(context: ScenarioContext, nodePool: NodePool): Promise<void> {
  const objects = context.stack.admin.objects;
  await objects.nodeClasses.create(
    exampleNodeClass(nodePool.spec.template.spec.nodeClassRef.name, context.runId),
  );
  await objects.nodePools.create(nodePool);
}

/** Deletes what createNodeClassAndPool created: the NodePool, then its AKSNodeClass. */
export async function deleteNodePoolAndClass(context: ScenarioContext, nodePool: NodePool): Promise<void> {
  const objects = context.stack.admin.objects;
  await objects.nodePools.delete(nodePool.metadata.name);
  await objects.nodeClasses.delete(nodePool.spec.template.spec.nodeClassRef.name);
}

/**
 * Waits until every NodeClaim `of()` returns carries its Node's name, and returns them. Registration
 * untaints the Node before it writes the NodeClaim's status.nodeName, and kube-scheduler binds pods in
 * between (the recorder may see that write later still): a NodeClaim read at "all pods Running" can lack
 * it, and its pods would then be counted on no NodeClaim.
 */
export async function nodeClaimsWithNodeNames(
  context: ScenarioContext,
  of: () => NodeClaim[],
): Promise<NodeClaim[]> {
  return waitFor(
    context,
    'every NodeClaim with its Node name',
    patience(context.stack),
    () => {
      const claims = of();
      return claims.every((c) => c.status?.nodeName) ? claims : undefined;
    },
    () =>
      `without one: ${of()
        .filter((c) => !c.status?.nodeName)
        .map((c) => c.metadata.name)
        .join(', ')}`,
  );
}

/** The NodeClaims of one NodePool the recorder currently holds. */
export function claimsOfPool(recorder: Recorder, nodePoolName: string): NodeClaim[] {
  return [...recorder.nodeClaims.values()].filter(
    (c) => c.metadata.labels?.[WellKnown.nodePoolLabel] === nodePoolName,
  );
}

/** A NodeClaim as Karpenter's provisioner would create it from the NodePool's template. */
export function nodeClaimFor(
  nodePool: NodePool,
  name: string,
  extraLabels: Record<string, string> = {},
): NodeClaim {
  const template = nodePool.spec.template;
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodeClaim',
    metadata: {
      name,
      labels: {
        ...template.metadata?.labels,
        [WellKnown.nodePoolLabel]: nodePool.metadata.name,
        ...extraLabels,
      },
    },
    spec: {
      nodeClassRef: template.spec.nodeClassRef,
      requirements: template.spec.requirements,
      ...(template.spec.startupTaints ? { startupTaints: template.spec.startupTaints } : {}),
      ...(template.spec.taints ? { taints: template.spec.taints } : {}),
    },
  };
}

/**
 * Stuck detection for a wait whose length grows with the work (hundreds of nodes on a shared machine):
 * past its timeout the wait goes on while `progress` keeps changing, and fails once it has not changed
 * for `stalledMs`, or at `ceilingMs` in all.
 */
export interface WaitProgress {
  /** A figure that changes whenever the wait gets closer (e.g. pods Running plus NodeClaims Initialized). */
  progress: () => number;
  stalledMs: number;
  ceilingMs: number;
}

/**
 * Polls `probe` (cheap: it reads the recorder) until it returns a value, or fails after `timeoutMs` (or,
 * with `whileProgressing`, once past it nothing moved for its `stalledMs`).
 */
export async function waitFor<T>(
  context: Pick<ScenarioContext, 'signal'>,
  what: string,
  timeoutMs: number,
  probe: () => T | undefined,
  /** What is still missing, for the timeout's message: a stuck wait should say where it is stuck. */
  missing?: () => string,
  whileProgressing?: WaitProgress,
): Promise<T> {
  const started = Date.now();
  let lastFigure = whileProgressing?.progress();
  let movedAt = started;
  for (;;) {
    const value = probe();
    if (value !== undefined) return value;
    if (context.signal.aborted) throw new Error(`cancelled while waiting for ${what}`);
    const now = Date.now();
    if (whileProgressing) {
      const figure = whileProgressing.progress();
      if (figure !== lastFigure) {
        lastFigure = figure;
        movedAt = now;
      }
    }
    const overtime = now - started > timeoutMs;
    const stalled = !whileProgressing || now - movedAt > whileProgressing.stalledMs;
    const ceiling = whileProgressing !== undefined && now - started > whileProgressing.ceilingMs;
    if ((overtime && stalled) || ceiling) {
      const detail = missing?.();
      const why = !whileProgressing
        ? `timed out after ${Math.round(timeoutMs / 1000)} s`
        : ceiling
          ? `gave up after ${Math.round((now - started) / 1000)} s (the ceiling)`
          : `timed out after ${Math.round((now - started) / 1000)} s, nothing moved for the last ${Math.round((now - movedAt) / 1000)} s`;
      throw new Error(`${why} waiting for ${what}${detail ? ` (${detail})` : ''}`);
    }
    await new Promise((resolve) => setTimeout(resolve, whileProgressing ? 500 : 50));
  }
}

/** Deletes the scenario's NodeClaims and waits until termination has removed them (VM, Node, finalizer). */
export async function deleteNodeClaims(
  context: ScenarioContext,
  names: readonly string[],
  timeoutMs: number,
): Promise<void> {
  const objects = context.stack.admin.objects;
  await Promise.all(
    names.map(async (name) => {
      if (context.recorder.nodeClaims.has(name)) await objects.nodeClaims.delete(name);
    }),
  );
  await waitFor(context, 'the NodeClaims to be terminated', timeoutMs, () =>
    names.every((name) => !context.recorder.nodeClaims.has(name)) ? true : undefined,
  );
}

/**
 * How long to wait for something the stack does in a few of its latencies. This is a deadline for a
 * stack that is stuck, not a measure of speed (the wait ends as soon as the state is reached): its floor
 * leaves room for a machine loaded by other test processes, where 10 launches through the real control
 * plane took more than 30 s at --speed 8. `designedMs` is how long the awaited state takes by the
 * scenario's own settings even on an idle machine (a consolidateAfter, a quiet period it waits out): the
 * slack comes on top of it, not out of it, so a wait that grows with those settings keeps its margin.
 */
export function patience(stack: LocalStack, multiple = 6, designedMs = 0): number {
  const t = stack.timings;
  const oneLaunch =
    t.vmCreateMs + (t.kubelet.bootDelayMs + t.kubelet.readyDelayMs + t.kubelet.startupTaintDelayMs) / t.speed;
  return designedMs + Math.max(90_000, oneLaunch * multiple + t.sweepPeriodSeconds * 2_000);
}
