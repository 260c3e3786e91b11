// Which pods provisioning is for: Karpenter's IsProvisionable (KS pkg/utils/pod/scheduling.go). The
// scheduler found no node (PodScheduled=False, reason Unschedulable; pods another scheduler marks
// differently are left alone), the pod is not bound, not nominated for a preemption, and neither a
// DaemonSet pod (the DaemonSet controller places it) nor a mirror pod (owned by a Node).

export interface ProvisionabilityFacts {
  nodeName?: string | undefined;
  nominatedNodeName?: string | undefined;
  /** PodScheduled's status and reason, when the scheduler has written it. */
  scheduled?: { status: string; reason?: string | undefined } | undefined;
  /** Kinds of the pod's controller owner references. */
  ownerKinds?: readonly string[] | undefined;
}

export function isProvisionable(pod: ProvisionabilityFacts): boolean {
  return (
    !pod.nodeName &&
    !pod.nominatedNodeName &&
    pod.scheduled?.status === 'False' &&
    pod.scheduled.reason === 'Unschedulable' &&
    !(pod.ownerKinds ?? []).some((kind) => kind === 'DaemonSet' || kind === 'Node')
  );
}
