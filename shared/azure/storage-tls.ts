// TLS options for the Storage SDKs that trust one extra CA: the local storage front's (the local stack and
// the tests reach Azurite through an HTTPS front, because the SDKs send a bearer token only over HTTPS).
// Unset in Azure, where Storage has a public certificate.
//
// The table SDK takes `tlsOptions` as a typed client option. The queue SDK's StoragePipelineOptions does
// not list it, but @azure/storage-queue builds its core pipeline from every pipeline option except
// httpClient (getCoreClientOptions), so `tlsOptions` reaches core-rest-pipeline's TLS policy the same
// way; queueClientOptions types that once, here.
import type { StoragePipelineOptions } from '@azure/storage-queue';

export interface StorageTlsOptions {
  tlsOptions?: { ca: string };
}

export function storageTlsOptions(caCertPem: string | undefined): StorageTlsOptions {
  return caCertPem === undefined ? {} : { tlsOptions: { ca: caCertPem } };
}

/** Queue client pipeline options that also trust `caCertPem` when given. */
export function queueClientOptions(
  options: StoragePipelineOptions,
  caCertPem: string | undefined,
): StoragePipelineOptions {
  const withTls: StoragePipelineOptions & StorageTlsOptions = { ...options, ...storageTlsOptions(caCertPem) };
  return withTls;
}
