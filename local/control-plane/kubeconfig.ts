import { readFile, writeFile } from 'node:fs/promises';

import { stringify } from 'yaml';

export type KubeconfigSpec = {
  server: string;
  caCertPath: string;
  userName: string;
} & ({ clientCertPath: string; clientKeyPath: string } | { token: string });

/**
 * Writes a kubeconfig with the certificates embedded, so it keeps working when copied elsewhere and
 * every client (kubectl, @kubernetes/client-node, the Go components) reads it the same way. A user is a
 * client certificate or a bearer token (a ServiceAccount's, from the TokenRequest API).
 */
export async function writeKubeconfig(kubeconfigPath: string, spec: KubeconfigSpec): Promise<void> {
  const base64 = async (file: string): Promise<string> => (await readFile(file)).toString('base64');
  const contextName = `${spec.userName}@nodeclaim-azure-local`;
  const document = {
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [
      {
        name: 'nodeclaim-azure-local',
        cluster: { server: spec.server, 'certificate-authority-data': await base64(spec.caCertPath) },
      },
    ],
    users: [
      {
        name: spec.userName,
        user:
          'token' in spec
            ? { token: spec.token }
            : {
                'client-certificate-data': await base64(spec.clientCertPath),
                'client-key-data': await base64(spec.clientKeyPath),
              },
      },
    ],
    contexts: [{ name: contextName, context: { cluster: 'nodeclaim-azure-local', user: spec.userName } }],
    'current-context': contextName,
    preferences: {},
  };
  await writeFile(kubeconfigPath, stringify(document), { mode: 0o600 });
}
