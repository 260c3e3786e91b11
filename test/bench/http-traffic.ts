// Counts what a KubeConfig's requests cost at the client's HTTP layer: requests by method, response body
// bytes as they crossed the wire (compressed when the API server gzipped them) and decoded, and the
// TCP/TLS connections opened. Every request, watches included, passes the configuration's authentication
// hook, where the connection pool is wrapped with a counting interceptor.
import { subscribe, unsubscribe } from 'node:diagnostics_channel';
import { createGunzip, type Gunzip } from 'node:zlib';
import type { RequestContext } from '@kubernetes/client-node';
import { PooledKubeConfig } from '../../shared/kube/client.js';

type Dispatcher = NonNullable<ReturnType<RequestContext['getDispatcher']>>;
type DispatchHandler = Parameters<Dispatcher['dispatch']>[1];
type Dispatch = Dispatcher['dispatch'];

export interface TrafficTotals {
  requests: number;
  byMethod: Record<string, number>;
  wireBytes: number;
  decodedBytes: number;
  connections: number;
}

export class CountingKubeConfig extends PooledKubeConfig {
  private counts = emptyTotals();
  private readonly wrapped = new WeakMap<Dispatcher, Dispatcher>();
  private readonly onConnected = () => {
    this.counts.connections += 1;
  };

  constructor() {
    super();
    subscribe('undici:client:connected', this.onConnected);
  }

  override async applySecurityAuthentication(context: RequestContext): Promise<void> {
    const method = String(context.getHttpMethod());
    this.counts.requests += 1;
    this.counts.byMethod[method] = (this.counts.byMethod[method] ?? 0) + 1;
    await super.applySecurityAuthentication(context);
    const pooled = context.getDispatcher();
    if (pooled === undefined) return;
    let counting = this.wrapped.get(pooled);
    if (!counting) {
      counting = pooled.compose((dispatch: Dispatch) => this.countingDispatch(dispatch)) as Dispatcher;
      this.wrapped.set(pooled, counting);
    }
    context.setDispatcher(counting);
  }

  /** Totals since the last reset. */
  totals(): TrafficTotals {
    return { ...this.counts, byMethod: { ...this.counts.byMethod } };
  }

  reset(): void {
    this.counts = emptyTotals();
  }

  close(): void {
    unsubscribe('undici:client:connected', this.onConnected);
  }

  private countingDispatch(dispatch: Dispatch): Dispatch {
    return (options, handler) => {
      let gunzip: Gunzip | undefined;
      const counts = () => this.counts;
      const onBody = (chunk: Buffer) => {
        counts().wireBytes += chunk.length;
        if (gunzip) gunzip.write(chunk);
        else counts().decodedBytes += chunk.length;
      };
      const wrapper: DispatchHandler = new Proxy(handler, {
        get(target, property, receiver) {
          if (property === 'onResponseStart' || property === 'onHeaders') {
            const original = Reflect.get(target, property, receiver) as
              ((...args: unknown[]) => unknown) | undefined;
            if (!original) return undefined;
            return (...args: unknown[]) => {
              if (isGzip(property === 'onResponseStart' ? args[2] : args[1])) {
                gunzip = createGunzip();
                gunzip.on('data', (decoded: Buffer) => {
                  counts().decodedBytes += decoded.length;
                });
                gunzip.on('error', () => undefined);
              }
              return original.apply(target, args);
            };
          }
          if (property === 'onResponseData' || property === 'onData') {
            const original = Reflect.get(target, property, receiver) as
              ((...args: unknown[]) => unknown) | undefined;
            if (!original) return undefined;
            return (...args: unknown[]) => {
              const chunk = property === 'onResponseData' ? args[1] : args[0];
              if (Buffer.isBuffer(chunk)) onBody(chunk);
              return original.apply(target, args);
            };
          }
          if (property === 'onResponseEnd' || property === 'onComplete') {
            const original = Reflect.get(target, property, receiver) as
              ((...args: unknown[]) => unknown) | undefined;
            if (!original) return undefined;
            return (...args: unknown[]) => {
              gunzip?.end();
              return original.apply(target, args);
            };
          }
          const value: unknown = Reflect.get(target, property, receiver);
          return typeof value === 'function' ? (value as (...a: unknown[]) => unknown).bind(target) : value;
        },
      });
      return dispatch(options, wrapper);
    };
  }
}

function emptyTotals(): TrafficTotals {
  return { requests: 0, byMethod: {}, wireBytes: 0, decodedBytes: 0, connections: 0 };
}

/** Headers arrive as an object (new handler API) or a flat [name, value, ...] buffer list (old one). */
function isGzip(headers: unknown): boolean {
  if (Array.isArray(headers)) {
    for (let i = 0; i + 1 < headers.length; i += 2) {
      if (String(headers[i]).toLowerCase() === 'content-encoding') {
        return String(headers[i + 1])
          .toLowerCase()
          .includes('gzip');
      }
    }
    return false;
  }
  if (headers && typeof headers === 'object') {
    const value = (headers as Record<string, unknown>)['content-encoding'];
    return String(value ?? '')
      .toLowerCase()
      .includes('gzip');
  }
  return false;
}
