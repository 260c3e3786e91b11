import { existsSync, readFileSync } from 'node:fs';
import { fileURLToPath } from 'node:url';

import { startControlPlane, type ControlPlane } from '../../local/control-plane/launcher.js';

const projectCrdDirectory = fileURLToPath(new URL('../../infra/k8s/crds/', import.meta.url));

/**
 * A control plane started by someone else that a test run attaches to instead of starting its own: the
 * RBAC mutation check (scripts/k8s-rbac-mutation-check.ts) runs the same tests once per removed verb,
 * and a control plane per run would cost it a minute and a half each. The file is what
 * `sharedControlPlaneFile()` there writes: the admin kubeconfig, server, CA and work directory.
 */
export const SHARED_CONTROL_PLANE_ENV = 'NODECLAIM_TEST_CONTROL_PLANE';

export type SharedControlPlane = Pick<
  ControlPlane,
  'kubeconfigPath' | 'server' | 'caCertPath' | 'caKeyPath' | 'workDir'
>;

/**
 * The control plane the whole test run shares: etcd, kube-apiserver, kube-scheduler and
 * kube-controller-manager, with the project's CRDs applied and Established. With
 * NODECLAIM_TEST_CONTROL_PLANE set, the one that file describes, left running at the end.
 */
export async function setupControlPlane(
  log: (line: string) => void,
): Promise<SharedControlPlane & { stop(): Promise<void> }> {
  const shared = process.env[SHARED_CONTROL_PLANE_ENV];
  if (shared) {
    const attached = JSON.parse(readFileSync(shared, 'utf8')) as SharedControlPlane;
    log(`control plane: attaching to the one at ${attached.server} (${SHARED_CONTROL_PLANE_ENV})`);
    return { ...attached, stop: () => Promise.resolve() };
  }
  const crdDirectories = existsSync(projectCrdDirectory) ? [projectCrdDirectory] : [];
  if (crdDirectories.length === 0)
    log(`control plane: ${projectCrdDirectory} does not exist; starting without CRDs`);
  return startControlPlane({ crdDirectories, log });
}
