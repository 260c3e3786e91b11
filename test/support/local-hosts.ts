// In-process hosts for the tests of the host itself, each one stopped after the test that created it.
import { afterEach } from 'vitest';
import {
  createLocalHost,
  type HostEvent,
  type LocalHost,
  type LocalHostOptions,
} from '../../local/host/index.js';

export type TestHostOptions = Omit<LocalHostOptions, 'storageConnectionString'>;

/**
 * Registers the hook that stops the hosts a test created; call it at the top of a file. The returned
 * function creates (does not start) a host on the Storage account `connectionString` names.
 */
export function useLocalHosts(connectionString: () => string): (options: TestHostOptions) => LocalHost {
  const hosts: LocalHost[] = [];

  afterEach(async () => {
    await Promise.all(hosts.splice(0).map((host) => host.stop()));
  });

  return (options) => {
    const host = createLocalHost({ ...options, storageConnectionString: connectionString() });
    hosts.push(host);
    return host;
  };
}

/** The first event from now on that `predicate` accepts. */
export function nextHostEvent(host: LocalHost, predicate: (event: HostEvent) => boolean): Promise<HostEvent> {
  return new Promise((resolve) => {
    const off = host.on((event) => {
      if (predicate(event)) {
        off();
        resolve(event);
      }
    });
  });
}
