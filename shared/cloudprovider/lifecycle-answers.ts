// What the Azure provider answers the lifecycle about its own objects without a cloud call of its own:
// the VM a NodeClaim becomes (its name, the name a provider ID gives back, whose it is by its tags), the
// orphan VMs among a list, the AKSNodeClass's status (its effective versions) and validity, the
// provider's own drift and what a failed rollout can roll back (a node image version), a
// reservation's seats, and what a spot preemption leaves avoided. Shared by the Azure provider and the test fake, so both answer the same; the
// two calls that need the cloud (images to resolve, offerings to mark) take the provider's own methods.
import type { CloudProvider } from './types.js';
import {
  holdsCommittedSeat,
  holdsReservationSeat,
  recordOfReservation,
  reservationClaimants,
} from './azure/decisions/capacity-reservations.js';
import { rememberPreemption, SPOT_PREEMPTED_REASON } from './azure/decisions/failure-memory.js';
import { imageRollbackOf, nodeClaimsRunning } from './azure/decisions/image-rollback.js';
import { chooseKubernetesVersion } from './azure/decisions/node-image-versions.js';
import { desiredNodeClassStatus, imageLookups } from './azure/decisions/nodeclass-status.js';
import { describeFieldProblems, nodeClassProblems } from './azure/decisions/nodeclass-validation.js';
import { orphanVmCandidates } from './azure/decisions/orphan-vms.js';
import { providerDrift } from './azure/decisions/provider-drift.js';
import { vmOwnership } from './azure/decisions/vm-ownership.js';
import { parseProviderId, vmNameFor } from './azure/decisions/vm-spec.js';

export type LifecycleAnswers = Pick<
  CloudProvider,
  | 'nodeClassStatus'
  | 'nodeClassInvalidity'
  | 'isDrifted'
  | 'rollbackOf'
  | 'nodeClaimsOnImageVersion'
  | 'instanceNameFor'
  | 'instanceNameOfProviderId'
  | 'nodeClaimNameOfProviderId'
  | 'instanceOwnership'
  | 'orphanInstances'
  | 'rememberPreemption'
  | 'holdsReservationSeat'
  | 'holdsCommittedSeat'
>;

// VM names are the NodeClaim's name behind a fixed prefix unless it had to be sanitized or hashed;
// vmNameFor of a one-letter name reveals the prefix without duplicating it here.
const vmNamePrefix = vmNameFor('a').slice(0, -1);

export function lifecycleAnswers(
  clusterName: () => string,
  provider: Pick<CloudProvider, 'resolveImages' | 'markUnavailable'> & { now: () => Date },
): LifecycleAnswers {
  return {
    async nodeClassStatus(nodeClass, kubernetesVersion) {
      // The images are looked up for the Kubernetes version the class will have, pinned or the control plane's.
      const effective = chooseKubernetesVersion(nodeClass, kubernetesVersion).kubernetesVersion;
      const lookups = imageLookups(nodeClass, effective);
      const resolved = 'problem' in lookups ? lookups : await provider.resolveImages(lookups);
      return desiredNodeClassStatus({ nodeClass, kubernetesVersion, resolved, now: provider.now() });
    },

    nodeClassInvalidity(nodeClass) {
      const problems = nodeClassProblems(nodeClass);
      return problems.length > 0 ? describeFieldProblems(problems) : undefined;
    },

    isDrifted: providerDrift,

    rollbackOf: imageRollbackOf,

    nodeClaimsOnImageVersion: nodeClaimsRunning,

    instanceNameFor: vmNameFor,

    instanceNameOfProviderId: (providerID) => parseProviderId(providerID)?.vmName,

    nodeClaimNameOfProviderId(providerID) {
      const vmName = parseProviderId(providerID)?.vmName;
      if (!vmName?.startsWith(vmNamePrefix)) return undefined;
      const candidate = vmName.slice(vmNamePrefix.length);
      return vmNameFor(candidate) === vmName ? candidate : undefined;
    },

    instanceOwnership: (instance, nodeClaimName) =>
      vmOwnership(instance, { clusterName: clusterName(), nodeClaimName }),

    orphanInstances: (instances, { knownNodeClaims, now, graceMs }) =>
      orphanVmCandidates({
        vms: instances.map((vm) => ({
          name: vm.name,
          tags: vm.tags,
          ...(vm.createdAt ? { timeCreated: vm.createdAt } : {}),
          ...(vm.state ? { provisioningState: vm.state } : {}),
        })),
        clusterName: clusterName(),
        knownNodeClaims,
        now,
        graceMs,
      }),

    async rememberPreemption(preempted, vmName) {
      const remembered = rememberPreemption(preempted);
      const expiresAt = new Date(provider.now().getTime() + remembered.ttlSeconds * 1000);
      const message = `Azure preempted spot VM ${vmName} (${preempted.vmSize} in ${preempted.zone})`;
      await provider.markUnavailable(remembered.blocks, {
        reason: SPOT_PREEMPTED_REASON,
        message,
        expiresAt,
      });
      return { ttlSeconds: remembered.ttlSeconds };
    },

    holdsReservationSeat(records, reservationId, claimants, nodeClaimName) {
      const record = recordOfReservation(records, reservationId);
      return (
        record !== undefined &&
        holdsReservationSeat(record, reservationClaimants(claimants, reservationId), nodeClaimName)
      );
    },

    holdsCommittedSeat(records, reservationId, claimants, nodeClaimName, resourceVersion) {
      const record = recordOfReservation(records, reservationId);
      return (
        record !== undefined &&
        holdsCommittedSeat(
          record,
          reservationClaimants(claimants, reservationId),
          nodeClaimName,
          resourceVersion,
        )
      );
    },
  };
}
