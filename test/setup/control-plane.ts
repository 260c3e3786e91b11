import { existsSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { startControlPlane, type ControlPlane } from '../../local/control-plane/launcher.js';

const projectCrdDirectory = fileURLToPath(new URL('../../infra/k8s/crds/', import.meta.url));

/**
 * The control plane the whole test run shares: etcd, kube-apiserver, kube-scheduler and
 * kube-controller-manager, with the project's CRDs applied and Established.
 */
export async function setupControlPlane(log: (line: string) => void): Promise<ControlPlane> {
  const crdDirectories = existsSync(projectCrdDirectory) ? [projectCrdDirectory] : [];
  if (crdDirectories.length === 0)
    log(`control plane: ${projectCrdDirectory} does not exist; starting without CRDs`);
  return startControlPlane({ crdDirectories, log });
}
