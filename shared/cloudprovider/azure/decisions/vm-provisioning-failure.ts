// Why a VM's creation failed, read from the VM itself rather than from its operation: Compute reports the
// failed operation's code in the instance view as `ProvisioningState/failed/<code>`, with Azure's message.
// A launch that polls the VM by GET (the VM already existed when launch ran) has only this to classify the
// failure by; without it an exhausted zone would look like any failure and never be avoided. Pure.

/** The fields of an instance view status this reads (the SDK's InstanceViewStatus has them). */
export interface InstanceViewStatusFields {
  code?: string;
  message?: string;
}

export interface ProvisioningFailure {
  /** ARM's error code, e.g. "ZonalAllocationFailed"; absent when the status names none. */
  code?: string;
  message?: string;
}

const FAILED_PREFIX = 'provisioningstate/failed';

/** The failure the instance view reports, or undefined when no status says provisioning failed. */
export function provisioningFailureOf(
  statuses: readonly InstanceViewStatusFields[] | undefined,
): ProvisioningFailure | undefined {
  const failed = statuses?.find((status) => status.code?.toLowerCase().startsWith(FAILED_PREFIX));
  if (!failed?.code) return undefined;
  const code = failed.code.slice(FAILED_PREFIX.length).replace(/^\//, '');
  return {
    ...(code ? { code } : {}),
    ...(failed.message ? { message: failed.message } : {}),
  };
}
