import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { isDeepStrictEqual } from 'node:util';

import {
  ApiException,
  ApiextensionsV1Api,
  dumpYaml,
  KubeConfig,
  loadYaml,
  type V1CustomResourceDefinition,
} from '@kubernetes/client-node';
import { parse, parseAllDocuments } from 'yaml';

export interface CrdSource {
  file: string;
  crd: V1CustomResourceDefinition;
}

/** Every CustomResourceDefinition in the *.yaml / *.yml files directly inside `directories`, in name order. */
export async function readCrdDirectories(directories: string[]): Promise<CrdSource[]> {
  const sources: CrdSource[] = [];
  for (const directory of directories) {
    const names = (await readdir(directory)).filter((name) => /\.ya?ml$/.test(name)).sort();
    for (const name of names) {
      const file = path.join(directory, name);
      const documents = parseAllDocuments(await readFile(file, 'utf8'));
      for (const [index, document] of documents.entries()) {
        if (document.errors.length > 0) {
          throw new Error(
            `${file} document ${index + 1}: ${document.errors.map((e) => e.message).join('; ')}`,
          );
        }
        const raw: unknown = document.toJS();
        if (raw === null || raw === undefined) continue;
        sources.push({ file, crd: toCrdModel(raw, `${file} document ${index + 1}`) });
      }
    }
  }
  return sources;
}

/**
 * The generated client sends only the fields its model knows, under their wire names; a field it does not
 * know would silently vanish and the server would then enforce a different schema than the file says.
 * Round-tripping through the model and comparing catches that.
 */
function toCrdModel(raw: unknown, where: string): V1CustomResourceDefinition {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw new Error(`${where} is not a Kubernetes object`);
  }
  const { apiVersion, kind } = raw as { apiVersion?: unknown; kind?: unknown };
  if (apiVersion !== 'apiextensions.k8s.io/v1' || kind !== 'CustomResourceDefinition') {
    throw new Error(
      `${where} is ${String(apiVersion)}/${String(kind)}; only apiextensions.k8s.io/v1 CustomResourceDefinitions belong in a CRD directory`,
    );
  }
  const json = JSON.stringify(raw);
  const model = loadYaml<V1CustomResourceDefinition>(json);
  const roundTripped: unknown = parse(dumpYaml(model));
  if (!isDeepStrictEqual(roundTripped, JSON.parse(json))) {
    throw new Error(`${where}: @kubernetes/client-node cannot represent this CRD without losing fields`);
  }
  return model;
}

export async function applyCrds(
  kubeconfigPath: string,
  sources: CrdSource[],
  timeoutMs: number,
  log: (line: string) => void,
): Promise<void> {
  const config = new KubeConfig();
  config.loadFromFile(kubeconfigPath);
  const api = config.makeApiClient(ApiextensionsV1Api);

  for (const { file, crd } of sources) {
    const name = crd.metadata?.name;
    if (!name) throw new Error(`${file}: a CustomResourceDefinition without metadata.name`);
    try {
      await api.createCustomResourceDefinition({ body: crd });
    } catch (error) {
      throw new Error(`applying ${name} from ${file} failed: ${describeApiError(error)}`, { cause: error });
    }
    log(`control plane: applied CRD ${name} (${path.basename(file)})`);
  }

  const deadline = Date.now() + timeoutMs;
  for (const { crd } of sources) {
    const name = crd.metadata?.name ?? '';
    for (;;) {
      const current = await api.readCustomResourceDefinition({ name });
      const established = current.status?.conditions?.find((condition) => condition.type === 'Established');
      if (established?.status === 'True') break;
      if (Date.now() > deadline) {
        throw new Error(
          `CRD ${name} was not Established after ${timeoutMs} ms: ${JSON.stringify(current.status?.conditions ?? [])}`,
        );
      }
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

function describeApiError(error: unknown): string {
  if (error instanceof ApiException) {
    const body: unknown = error.body;
    return `HTTP ${error.code}: ${typeof body === 'string' ? body : JSON.stringify(body)}`;
  }
  return error instanceof Error ? error.message : String(error);
}
