// local.settings.json for running the app in Azure Functions Core Tools (`func start`) against the
// running local stack instead of the in-process host: the stack's own app settings (kubeconfig, ARM
// emulator and its CA, Azurite with blobs for the host's leases and Durable Functions, queue, table),
// plus what the Functions host itself reads.
export interface CoreToolsSettings {
  IsEncrypted: false;
  Values: Record<string, string>;
}

export function coreToolsSettings(appSettings: Readonly<Record<string, string>>): CoreToolsSettings {
  return {
    IsEncrypted: false,
    Values: {
      FUNCTIONS_WORKER_RUNTIME: 'node',
      // Function keys in files, not in the (emulated) blob container the host would otherwise create.
      AzureWebJobsSecretStorageType: 'files',
      ...appSettings,
    },
  };
}
