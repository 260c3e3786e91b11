// The local host's HTTP trigger listener on its own: a request reaches the function whose route and
// method match, with its route parameters, query, lower-cased headers and body; an unknown path is 404,
// a known route with another method 405, and a handler that throws is a bare 500 (its message is logged,
// never sent), as the Functions host answers.
import { afterEach, describe, expect, it } from 'vitest';
import { createEventBus } from '../../local/host/events.js';
import { createHttpListener, type HttpListener } from '../../local/host/http-listener.js';
import { createWorkTracker } from '../../local/host/work-tracker.js';
import { silentLogger } from '../../shared/observability/logger.js';
import type { HandlerContext, HttpRequestData } from '../../shared/runtime/definitions.js';

let listener: HttpListener | undefined;
afterEach(async () => {
  await listener?.stop();
  listener = undefined;
});

const contextFor = (functionName: string, invocationId: string): HandlerContext => ({
  functionName,
  invocationId,
  log: silentLogger,
  orchestrations: {
    startNew: () => Promise.reject(new Error('unused')),
    getStatus: () => Promise.resolve(undefined),
    raiseEvent: () => Promise.resolve(),
    terminate: () => Promise.resolve(),
    purge: () => Promise.resolve(),
  },
});

describe('the local host HTTP listener', () => {
  it('routes by path and method under /api, and answers 404, 405 and a bare 500 as the Functions host does', async () => {
    const seen: HttpRequestData[] = [];
    const events = createEventBus();
    const kinds: string[] = [];
    events.on((event) => kinds.push(event.type));
    listener = createHttpListener({
      definitions: [
        {
          kind: 'http',
          name: 'echo',
          route: 'things/{kind}/{name}',
          methods: ['POST'],
          handler: (request) => {
            seen.push(request);
            return Promise.resolve({ status: 201, headers: { 'x-answer': 'yes' }, body: 'made' });
          },
        },
        {
          kind: 'http',
          name: 'broken',
          route: 'broken',
          methods: ['GET'],
          handler: () => Promise.reject(new Error('secret detail')),
        },
      ],
      log: silentLogger,
      events,
      work: createWorkTracker(),
      contextFor,
    });
    await listener.start();
    const base = listener.baseUrl();
    expect(base).toMatch(/^http:\/\/127\.0\.0\.1:\d+\/api$/);

    const made = await fetch(`${base}/things/pod/a%20b?x=1&x=2`, {
      method: 'POST',
      headers: { 'X-Custom': 'v' },
      body: 'payload',
    });
    expect(made.status).toBe(201);
    expect(made.headers.get('x-answer')).toBe('yes');
    expect(await made.text()).toBe('made');
    expect(seen[0]).toMatchObject({
      method: 'POST',
      params: { kind: 'pod', name: 'a b' },
      query: { x: '1' },
      body: 'payload',
    });
    expect(seen[0]?.headers['x-custom']).toBe('v');

    expect((await fetch(`${base}/things/pod/a`)).status).toBe(405);
    expect((await fetch(`${base}/nothing`)).status).toBe(404);
    const broken = await fetch(`${base}/broken`);
    expect(broken.status).toBe(500);
    expect(await broken.text()).toBe('');
    expect(kinds).toEqual(['function.invoked', 'function.succeeded', 'function.invoked', 'function.failed']);
  });
});
