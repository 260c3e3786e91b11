// The Azure errors a VM launch can meet, with the codes, HTTP statuses and message texts the
// Compute resource provider uses, so that code classifying them is tested against realistic input.

import { ArmError, type ArmErrorDetail } from './errors.js';

export interface QuotaFigures {
  currentLimit: number;
  currentUsage: number;
  additionalRequired: number;
}

const quotaRequestUrl =
  'https://aka.ms/ProdportalCRP/#blade/Microsoft_Azure_Capacity/UsageAndQuota.ReactView/Parameters/';

function quotaMessage(
  quotaName: string,
  location: string,
  figures: QuotaFigures,
  readMoreUrl: string,
): string {
  const newLimit = figures.currentUsage + figures.additionalRequired;
  return (
    `Operation could not be completed as it results in exceeding approved ${quotaName} quota. ` +
    `Additional details - Deployment Model: Resource Manager, Location: ${location}, ` +
    `Current Limit: ${figures.currentLimit}, Current Usage: ${figures.currentUsage}, ` +
    `Additional Required: ${figures.additionalRequired}, (Minimum) New Limit Required: ${newLimit}. ` +
    `Submit a request for Quota increase at ${quotaRequestUrl} by specifying parameters listed in the ` +
    `\u2018Details\u2019 section for deployment to succeed. Please read more about quota limits at ${readMoreUrl}`
  );
}

/** Family vCPU quota, e.g. "standardDSv5Family Cores". */
export function familyQuotaExceeded(family: string, location: string, figures: QuotaFigures): ArmError {
  return new ArmError(
    409,
    'OperationNotAllowed',
    quotaMessage(
      `${family} Cores`,
      location,
      figures,
      'https://docs.microsoft.com/en-us/azure/azure-supportability/per-vm-quota-requests',
    ),
  );
}

export function regionalQuotaExceeded(location: string, figures: QuotaFigures): ArmError {
  return new ArmError(
    409,
    'OperationNotAllowed',
    quotaMessage(
      'Total Regional Cores',
      location,
      figures,
      'https://docs.microsoft.com/en-us/azure/azure-supportability/regional-quota-requests',
    ),
  );
}

/** Spot and low-priority VMs draw from their own regional quota. */
export function lowPriorityQuotaExceeded(location: string, figures: QuotaFigures): ArmError {
  return new ArmError(
    409,
    'OperationNotAllowed',
    quotaMessage(
      'Total Regional Low-priority vCPUs',
      location,
      figures,
      'https://docs.microsoft.com/en-us/azure/azure-supportability/low-priority-quota',
    ),
  );
}

export function skuNotAvailable(
  resourceId: string,
  location: string,
  zone: string | undefined,
  subscriptionId: string,
): ArmError {
  const where = zone === undefined ? `location '${location}'` : `location '${location}' zones '${zone}'`;
  return new ArmError(
    409,
    'SkuNotAvailable',
    `The requested VM size for resource '${resourceId}' is currently not available in ${where} for subscription ` +
      `'${subscriptionId}'. Please try another size or deploy to a different location or zones. ` +
      'See https://aka.ms/azureskunotavailable for details.',
  );
}

/** Errors that end a VM creation LRO (the PUT was accepted; the operation ends Failed). */
export type AllocationFailureCode =
  | 'AllocationFailed'
  | 'ZonalAllocationFailed'
  | 'OverconstrainedAllocationRequest'
  | 'OverconstrainedZonalAllocationRequest';

const allocationGuidance =
  'Read more about improving likelihood of allocation success at http://aka.ms/allocation-guidance';

const overconstrainedPrefix =
  'Allocation failed. VM(s) with the following constraints cannot be allocated, because the condition is too ' +
  'restrictive. Please remove some constraints and try again. Constraints applied are:\n';

export function allocationFailure(code: AllocationFailureCode): ArmErrorDetail {
  switch (code) {
    case 'AllocationFailed':
      return {
        code,
        message: `Allocation failed. We do not have sufficient capacity for the requested VM size in this region. ${allocationGuidance}`,
      };
    case 'ZonalAllocationFailed':
      return {
        code,
        message: `Allocation failed. We do not have sufficient capacity for the requested VM size in this zone. ${allocationGuidance}`,
      };
    case 'OverconstrainedAllocationRequest':
      return {
        code,
        message: `${overconstrainedPrefix}  - Networking Constraints (such as Accelerated Networking or IPv6)\n  - VM Size\n`,
      };
    case 'OverconstrainedZonalAllocationRequest':
      return {
        code,
        message: `${overconstrainedPrefix}  - Availability Zone\n  - Networking Constraints (such as Accelerated Networking or IPv6)\n  - VM Size\n`,
      };
  }
}

/** A DELETE that lands while a creation is still running pre-empts it. */
export function operationPreempted(): ArmErrorDetail {
  return {
    code: 'OperationPreempted',
    message: 'Operation execution has been preempted by a more recent operation.',
  };
}

export function vmMarkedForDeletion(vmName: string): ArmError {
  return new ArmError(
    409,
    'OperationNotAllowed',
    `Operation 'PUT' is not allowed on VM '${vmName}' since the VM is marked for deletion. ` +
      'You can only retry the Delete operation (or wait for an ongoing one to complete).',
  );
}

export function throttled(
  policy: string,
  retryAfterSeconds: number,
  allowed: number,
  measured: number,
): ArmError {
  const now = new Date();
  return new ArmError(
    429,
    'OperationNotAllowed',
    'The server rejected the request because too many requests have been received for this subscription.',
    undefined,
    [
      {
        code: 'TooManyRequests',
        target: policy,
        message: JSON.stringify({
          operationGroup: policy,
          startTime: new Date(now.getTime() - 60_000).toISOString(),
          endTime: now.toISOString(),
          allowedRequestCount: allowed,
          measuredRequestCount: measured,
        }),
      },
    ],
    { 'retry-after': String(retryAfterSeconds) },
  );
}
