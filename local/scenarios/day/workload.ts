// The day's objects on the cluster: an AKSNodeClass and a NodePool per pool of the plan, the Deployments
// (with their PDBs and do-not-disrupt pods) and the DaemonSet, and the scaling that follows the plan's
// curve. Level-triggered like the app: each tick the driver writes what the plan wants now if the last
// write did not take (an API server outage), so a failed write is only ever retried, never lost.
import {
  KubeConfig,
  PatchStrategy,
  PolicyV1Api,
  setHeaderOptions,
  type V1Deployment,
} from '@kubernetes/client-node';
import { WellKnown, type AKSNodeClass, type Budget, type NodePool } from '../../../shared/models/index.js';
import { RUN_LABEL } from '../../stack/local-stack.js';
import { pauseContainer, zoneSpread } from '../deployment-set.js';
import { agentStartupTaint, type ScenarioContext } from '../scenario.js';
import type { DayClock } from './day-clock.js';
import type { PoolName, PoolPlan, WorkloadPlan } from './plan.js';

export const DAEMONSET = 'agent';

export const poolObjectName = (pool: PoolName, runId: string): string => `${pool}-${runId}`;
export const setName = (workload: Pick<WorkloadPlan, 'name'>, runId: string): string =>
  `${workload.name}-${runId}`;

const mergePatch = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);

const goSeconds = (ms: number): string => `${Math.max(1, Math.round(ms / 1000))}s`;

export function nodeClassFor(pool: PoolPlan, runId: string): AKSNodeClass {
  return {
    apiVersion: 'karpenter.azure.com/v1beta1',
    kind: 'AKSNodeClass',
    metadata: { name: poolObjectName(pool.name, runId), labels: { [RUN_LABEL]: runId } },
    spec: { imageFamily: 'Ubuntu2204' },
  };
}

export function nodePoolFor(pool: PoolPlan, runId: string, clock: DayClock, budgets: Budget[]): NodePool {
  const name = poolObjectName(pool.name, runId);
  return {
    apiVersion: 'karpenter.sh/v1',
    kind: 'NodePool',
    metadata: { name, labels: { [RUN_LABEL]: runId } },
    spec: {
      disruption: {
        consolidationPolicy: pool.consolidationPolicy,
        consolidateAfter: goSeconds(pool.consolidateAfterHours * clock.msPerHour),
        budgets,
      },
      limits: { cpu: '400' },
      template: {
        metadata: { labels: { [RUN_LABEL]: runId } },
        spec: {
          nodeClassRef: { group: 'karpenter.azure.com', kind: 'AKSNodeClass', name },
          startupTaints: [agentStartupTaint],
          expireAfter:
            pool.expireAfterHours === undefined
              ? 'Never'
              : goSeconds(pool.expireAfterHours * clock.msPerHour),
          requirements: [
            { key: WellKnown.archLabel, operator: 'In', values: [pool.arch] },
            { key: WellKnown.capacityTypeLabel, operator: 'In', values: [...pool.capacityTypes] },
            { key: WellKnown.skuFamilyLabel, operator: 'In', values: [...pool.families] },
            { key: WellKnown.skuCpuLabel, operator: 'Lt', values: [String(pool.cpuBelow)] },
          ],
        },
      },
    },
  };
}

export const setLabels = (workload: Pick<WorkloadPlan, 'name'>, runId: string): Record<string, string> => ({
  app: setName(workload, runId),
  [RUN_LABEL]: runId,
});

function deploymentFor(workload: WorkloadPlan, runId: string, replicas: number): V1Deployment {
  const labels = setLabels(workload, runId);
  return {
    metadata: { name: setName(workload, runId) },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: {
          labels,
          ...(workload.doNotDisrupt ? { annotations: { [WellKnown.doNotDisruptAnnotation]: 'true' } } : {}),
        },
        spec: {
          terminationGracePeriodSeconds: 1,
          nodeSelector: { [WellKnown.nodePoolLabel]: poolObjectName(workload.pool, runId) },
          ...(workload.zoneSpread ? { topologySpreadConstraints: [zoneSpread(labels)] } : {}),
          containers: [pauseContainer(workload)],
        },
      },
    },
  };
}

export interface Workload {
  /** Creates the pools' classes and NodePools, the Deployments at hour 0, the PDBs and the DaemonSet. */
  create(budgets: (pool: PoolPlan) => Budget[]): Promise<void>;
  /** Writes each Deployment's replicas for the hour if they differ from what was last written. */
  scaleTo(hour: number): Promise<void>;
  /** Replicas last written per set (the `app` label), and when. */
  readonly written: ReadonlyMap<string, number>;
  /** Deletes everything `create` made except the NodePools and classes. */
  deleteWorkloads(): Promise<void>;
}

export function dayWorkload(
  context: ScenarioContext,
  pools: readonly PoolPlan[],
  workloads: readonly WorkloadPlan[],
  clock: DayClock,
  onReplicas: (set: string, replicas: number, at: number) => void,
): Workload {
  const { runId, namespace, apps } = context;
  const config = new KubeConfig();
  config.loadFromFile(context.stack.kubeconfigPath);
  const policy = config.makeApiClient(PolicyV1Api);
  const objects = context.stack.admin.objects;
  const written = new Map<string, number>();
  const replicasAt = (workload: WorkloadPlan, hour: number) =>
    workload.replicasByHour[Math.max(0, Math.min(workload.replicasByHour.length - 1, Math.floor(hour)))] ?? 0;

  return {
    written,
    async create(budgets) {
      for (const pool of pools) {
        await objects.nodeClasses.create(nodeClassFor(pool, runId));
        await objects.nodePools.create(nodePoolFor(pool, runId, clock, budgets(pool)));
      }
      await apps.createNamespacedDaemonSet({
        namespace,
        body: {
          metadata: { name: `${DAEMONSET}-${runId}` },
          spec: {
            selector: { matchLabels: { app: `${DAEMONSET}-${runId}` } },
            template: {
              metadata: { labels: { app: `${DAEMONSET}-${runId}`, [RUN_LABEL]: runId } },
              spec: {
                terminationGracePeriodSeconds: 1,
                nodeSelector: { [RUN_LABEL]: runId },
                tolerations: [{ operator: 'Exists', effect: 'NoSchedule' }],
                containers: [
                  {
                    name: 'agent',
                    image: 'registry.k8s.io/pause:3.10',
                    resources: { requests: { cpu: '10m', memory: '32Mi' } },
                  },
                ],
              },
            },
          },
        },
      });
      for (const workload of workloads) {
        const replicas = replicasAt(workload, 0);
        await apps.createNamespacedDeployment({ namespace, body: deploymentFor(workload, runId, replicas) });
        written.set(setName(workload, runId), replicas);
        onReplicas(setName(workload, runId), replicas, Date.now());
        if (workload.pdb) {
          await policy.createNamespacedPodDisruptionBudget({
            namespace,
            body: {
              metadata: { name: setName(workload, runId) },
              // AlwaysAllow, as Kubernetes recommends: a pod that is not Ready (on a node whose kubelet
              // died) protects no availability, and under the default IfHealthyBudget a PDB at its limit
              // refuses its eviction while its replacement cannot start until it is gone, so a repaired
              // node would drain forever.
              spec: {
                ...workload.pdb,
                selector: { matchLabels: setLabels(workload, runId) },
                unhealthyPodEvictionPolicy: 'AlwaysAllow',
              },
            },
          });
        }
      }
    },
    async scaleTo(hour) {
      for (const workload of workloads) {
        const name = setName(workload, runId);
        const replicas = replicasAt(workload, hour);
        if (written.get(name) === replicas) continue;
        await apps.patchNamespacedDeploymentScale(
          { name, namespace, body: { spec: { replicas } } },
          mergePatch,
        );
        written.set(name, replicas);
        onReplicas(name, replicas, Date.now());
      }
    },
    async deleteWorkloads() {
      await Promise.all([
        ...workloads.map((w) =>
          apps.deleteNamespacedDeployment({ namespace, name: setName(w, runId) }).catch(() => undefined),
        ),
        ...workloads
          .filter((w) => w.pdb)
          .map((w) =>
            policy
              .deleteNamespacedPodDisruptionBudget({ namespace, name: setName(w, runId) })
              .catch(() => undefined),
          ),
        apps.deleteNamespacedDaemonSet({ namespace, name: `${DAEMONSET}-${runId}` }).catch(() => undefined),
      ]);
    },
  };
}
