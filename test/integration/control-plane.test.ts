import { existsSync } from 'node:fs';
import { chmod, mkdir, mkdtemp, readdir, readFile, rm, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import path from 'node:path';

import {
  ApiException,
  CoreV1Api,
  CustomObjectsApi,
  KubeConfig,
  PatchStrategy,
  setHeaderOptions,
  type V1Node,
  type V1Pod,
} from '@kubernetes/client-node';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

import { ensureControlPlaneBinaries } from '../../local/control-plane/build.js';
import { startControlPlane, type ControlPlane } from '../../local/control-plane/launcher.js';
import { pollUntilDefined } from '../support/poll.js';

// This file starts a control plane of its own (with kube-scheduler and kube-controller-manager) rather than
// using the shared one, because it checks what the shared one must not do mid-run: stop and leave nothing.

const widgetCrd = `
apiVersion: apiextensions.k8s.io/v1
kind: CustomResourceDefinition
metadata:
  name: widgets.tests.nodeclaim.local
spec:
  group: tests.nodeclaim.local
  scope: Namespaced
  names: { plural: widgets, singular: widget, kind: Widget, listKind: WidgetList }
  versions:
  - name: v1
    served: true
    storage: true
    subresources: { status: {} }
    schema:
      openAPIV3Schema:
        type: object
        required: [spec]
        properties:
          spec:
            type: object
            required: [min, max]
            x-kubernetes-validations:
            - rule: self.min <= self.max
              message: min must not exceed max
            properties:
              min: { type: integer, minimum: 0 }
              max: { type: integer }
          status:
            type: object
            properties:
              phase: { type: string }
`;

const widgets = { group: 'tests.nodeclaim.local', version: 'v1', plural: 'widgets' } as const;
const namespace = 'control-plane-test';

function isProcessAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function statusOf(request: Promise<unknown>): Promise<{ code: number; message: string }> {
  try {
    await request;
    return { code: 200, message: '' };
  } catch (error) {
    if (!(error instanceof ApiException)) throw error;
    const body: unknown = error.body;
    return { code: error.code, message: typeof body === 'string' ? body : JSON.stringify(body) };
  }
}

describe('local control plane', () => {
  let controlPlane: ControlPlane;
  let crdDirectory: string;
  let core: CoreV1Api;
  let customObjects: CustomObjectsApi;
  const logLines: string[] = [];

  beforeAll(async () => {
    crdDirectory = await mkdtemp(path.join(tmpdir(), 'control-plane-test-crds-'));
    await writeFile(path.join(crdDirectory, 'widgets.yaml'), widgetCrd);
    controlPlane = await startControlPlane({
      crdDirectories: [crdDirectory],
      log: (line) => logLines.push(line),
    });
    const config = new KubeConfig();
    config.loadFromFile(controlPlane.kubeconfigPath);
    core = config.makeApiClient(CoreV1Api);
    customObjects = config.makeApiClient(CustomObjectsApi);
  }, 900_000);

  afterAll(async () => {
    await controlPlane?.stop();
    if (crdDirectory) await rm(crdDirectory, { recursive: true, force: true });
  });

  it('serves a loopback HTTPS endpoint with all four components running', () => {
    expect(controlPlane.server).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect(controlPlane.processes.map((p) => p.name).sort()).toEqual([
      'etcd',
      'kube-apiserver',
      'kube-controller-manager',
      'kube-scheduler',
    ]);
    for (const { pid } of controlPlane.processes) expect(isProcessAlive(pid)).toBe(true);
  });

  it('stores and returns a Namespace and a ConfigMap', async () => {
    await core.createNamespace({ body: { metadata: { name: namespace } } });
    await core.createNamespacedConfigMap({
      namespace,
      body: { metadata: { name: 'settings' }, data: { greeting: 'hello' } },
    });
    const read = await core.readNamespacedConfigMap({ namespace, name: 'settings' });
    expect(read.data).toEqual({ greeting: 'hello' });
    expect(read.metadata?.uid).toBeTruthy();
  });

  it('enforces the CRD schema and its CEL rule on the server', async () => {
    const widget = (name: string, spec: Record<string, unknown>): object => ({
      apiVersion: 'tests.nodeclaim.local/v1',
      kind: 'Widget',
      metadata: { name },
      spec,
    });
    const create = (body: object): Promise<unknown> =>
      customObjects.createNamespacedCustomObject({ ...widgets, namespace, body });

    expect((await statusOf(create(widget('good', { min: 1, max: 2 })))).code).toBe(200);

    const wrongType = await statusOf(create(widget('wrong-type', { min: 'one', max: 2 })));
    expect(wrongType.code).toBe(422);
    expect(wrongType.message).toContain('spec.min');

    const celViolation = await statusOf(create(widget('inverted', { min: 5, max: 1 })));
    expect(celViolation.code).toBe(422);
    expect(celViolation.message).toContain('min must not exceed max');
  });

  it('keeps status behind the status subresource', async () => {
    await customObjects.createNamespacedCustomObject({
      ...widgets,
      namespace,
      body: {
        apiVersion: 'tests.nodeclaim.local/v1',
        kind: 'Widget',
        metadata: { name: 'with-status' },
        spec: { min: 0, max: 1 },
        status: { phase: 'Ignored' },
      },
    });
    type Widget = { metadata: { resourceVersion: string }; spec: object; status?: { phase?: string } };
    const read = async (): Promise<Widget> =>
      (await customObjects.getNamespacedCustomObject({
        ...widgets,
        namespace,
        name: 'with-status',
      })) as Widget;

    const created = await read();
    expect(created.status).toBeUndefined();

    await customObjects.replaceNamespacedCustomObjectStatus({
      ...widgets,
      namespace,
      name: 'with-status',
      body: { ...created, status: { phase: 'Ready' } },
    });
    const afterStatusWrite = await read();
    expect(afterStatusWrite.status?.phase).toBe('Ready');

    await customObjects.replaceNamespacedCustomObject({
      ...widgets,
      namespace,
      name: 'with-status',
      body: { ...afterStatusWrite, status: { phase: 'Overwritten' } },
    });
    expect((await read()).status?.phase).toBe('Ready');
  });

  it('schedules a Pod onto a Ready Node', async () => {
    const nodeName = 'fake-node-1';
    const node: V1Node = {
      metadata: {
        name: nodeName,
        labels: { 'kubernetes.io/hostname': nodeName, 'kubernetes.io/os': 'linux' },
      },
      spec: {},
    };
    await core.createNode({ body: node });
    // No kubelet runs here, so this test plays its part: Node status is only writable through /status.
    // A patch, as kubelet writes it, not a replace of the version just read: the node lifecycle
    // controller may already have written the new Node (its not-ready taint) in between.
    await core.patchNodeStatus(
      {
        name: nodeName,
        body: {
          status: {
            capacity: { cpu: '4', memory: '16Gi', pods: '110' },
            allocatable: { cpu: '4', memory: '16Gi', pods: '110' },
            conditions: [
              {
                type: 'Ready',
                status: 'True',
                reason: 'KubeletReady',
                message: 'set by the control-plane test',
                lastHeartbeatTime: new Date().toISOString(),
                lastTransitionTime: new Date().toISOString(),
              },
            ],
          },
        },
      },
      setHeaderOptions('Content-Type', PatchStrategy.StrategicMergePatch),
    );

    // The ServiceAccount admission plugin refuses Pods until kube-controller-manager made the default account.
    await pollUntilDefined(
      'the default ServiceAccount',
      async () => {
        const outcome = await statusOf(core.readNamespacedServiceAccount({ namespace, name: 'default' }));
        return outcome.code === 200 ? true : undefined;
      },
      60_000,
    );

    const pod: V1Pod = {
      metadata: { name: 'sleeper' },
      spec: {
        containers: [
          {
            name: 'main',
            image: 'registry.invalid/sleep:1',
            resources: { requests: { cpu: '1', memory: '1Gi' } },
          },
        ],
      },
    };
    await core.createNamespacedPod({ namespace, body: pod });
    const scheduledOn = await pollUntilDefined(
      'the Pod to be scheduled',
      async () => {
        const current = await core.readNamespacedPod({ namespace, name: 'sleeper' });
        return current.spec?.nodeName;
      },
      60_000,
    );
    expect(scheduledOn).toBe(nodeName);
  });

  it('stop() leaves no process and no work directory behind', async () => {
    const pids = controlPlane.processes.map((p) => p.pid);
    expect(pids.every(isProcessAlive)).toBe(true);
    await controlPlane.stop();
    expect(pids.filter(isProcessAlive)).toEqual([]);
    expect(existsSync(controlPlane.workDir)).toBe(false);
  });
});

/** Processes whose command line mentions `needle`, read from /proc so nothing is assumed about names. */
async function processesMentioning(needle: string): Promise<number[]> {
  const found: number[] = [];
  for (const entry of await readdir('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    const commandLine = await readFile(`/proc/${entry}/cmdline`, 'utf8').catch(() => '');
    if (commandLine.includes(needle)) found.push(Number(entry));
  }
  return found;
}

describe('a control-plane component that fails to start', () => {
  const previousAssets = process.env['KUBEBUILDER_ASSETS'];
  let scratch: string;

  beforeAll(async () => {
    scratch = await mkdtemp(path.join(tmpdir(), 'control-plane-failing-'));
  });

  afterAll(async () => {
    if (previousAssets === undefined) delete process.env['KUBEBUILDER_ASSETS'];
    else process.env['KUBEBUILDER_ASSETS'] = previousAssets;
    await rm(scratch, { recursive: true, force: true });
  });

  it('is reported with the end of its log, and what did start is stopped', async () => {
    // envtest-style assets: the real etcd next to a kube-apiserver that refuses to run.
    const { etcd } = await ensureControlPlaneBinaries();
    const assets = path.join(scratch, 'assets');
    await rm(assets, { recursive: true, force: true });
    await mkdir(assets, { recursive: true });
    await symlink(etcd, path.join(assets, 'etcd'));
    const brokenApiserver = path.join(assets, 'kube-apiserver');
    await writeFile(
      brokenApiserver,
      '#!/bin/sh\necho "E0000 flag provided but not defined: --nonsense" >&2\nexit 3\n',
    );
    await chmod(brokenApiserver, 0o755);
    process.env['KUBEBUILDER_ASSETS'] = assets;

    const workDir = path.join(scratch, 'work');
    const failure = await startControlPlane({ workDir, scheduler: false, controllerManager: false }).then(
      () => undefined,
      (error: unknown) => error,
    );

    expect(failure).toBeInstanceOf(Error);
    expect((failure as Error).message).toContain('kube-apiserver exited with code 3 before becoming ready');
    expect((failure as Error).message).toContain('flag provided but not defined: --nonsense');
    expect(await processesMentioning(path.join(workDir, 'etcd-data'))).toEqual([]);
    // The caller chose the work dir, so the logs stay for inspection.
    expect(existsSync(path.join(workDir, 'kube-apiserver.log'))).toBe(true);
  });
});
