// Where orchestration instances live between episodes. With a directory, each instance is one JSON file,
// replaced atomically (write a temporary file, then rename), so a crash leaves either the old or the new
// state and a restarted host resumes from it. Without one, instances live in memory.
import { mkdir, readdir, readFile, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { InstanceRecord } from './history.js';

export interface HistoryStore {
  load(instanceId: string): Promise<InstanceRecord | undefined>;
  save(record: InstanceRecord): Promise<void>;
  remove(instanceId: string): Promise<void>;
  list(): Promise<InstanceRecord[]>;
}

export function createMemoryHistoryStore(): HistoryStore {
  const records = new Map<string, string>();
  return {
    load: (instanceId) => {
      const text = records.get(instanceId);
      return Promise.resolve(text === undefined ? undefined : (JSON.parse(text) as InstanceRecord));
    },
    save: (record) => {
      // Stored as text so callers never share mutable state with the store, exactly like the file store.
      records.set(record.instanceId, JSON.stringify(record));
      return Promise.resolve();
    },
    remove: (instanceId) => {
      records.delete(instanceId);
      return Promise.resolve();
    },
    list: () => Promise.resolve([...records.values()].map((text) => JSON.parse(text) as InstanceRecord)),
  };
}

const suffix = '.json';

export function createFileHistoryStore(directory: string): HistoryStore {
  let ready: Promise<unknown> | undefined;
  let temporaryCounter = 0;
  const ensureDirectory = (): Promise<unknown> => (ready ??= mkdir(directory, { recursive: true }));
  // Instance IDs are caller-chosen; encoding keeps any ID a single safe file name.
  const fileOf = (instanceId: string): string => join(directory, encodeURIComponent(instanceId) + suffix);

  const readRecord = async (path: string): Promise<InstanceRecord | undefined> => {
    try {
      return JSON.parse(await readFile(path, 'utf8')) as InstanceRecord;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw error;
    }
  };

  return {
    load: async (instanceId) => {
      await ensureDirectory();
      return readRecord(fileOf(instanceId));
    },
    save: async (record) => {
      await ensureDirectory();
      const target = fileOf(record.instanceId);
      temporaryCounter += 1;
      const temporary = `${target}.${process.pid}.${temporaryCounter}.tmp`;
      await writeFile(temporary, JSON.stringify(record), 'utf8');
      await rename(temporary, target);
    },
    remove: async (instanceId) => {
      await ensureDirectory();
      await rm(fileOf(instanceId), { force: true });
    },
    list: async () => {
      await ensureDirectory();
      const names = (await readdir(directory)).filter((name) => name.endsWith(suffix));
      const records = await Promise.all(names.map((name) => readRecord(join(directory, name))));
      return records.filter((record): record is InstanceRecord => record !== undefined);
    },
  };
}
