import http from 'node:http';
import https from 'node:https';

import { describeExit, logTail, type ComponentProcess } from './processes.js';

export interface HealthProbe {
  url: string;
  /** PEM trust anchor for https; absent means the component's self-signed serving certificate is accepted. */
  ca?: Buffer;
  clientCert?: Buffer;
  clientKey?: Buffer;
}

const pollIntervalMs = 100;

/**
 * Polls `probe` until it answers 200. Fails early, with the end of the component's log, if the
 * component exits first or `timeoutMs` passes.
 */
export async function waitUntilHealthy(
  component: ComponentProcess,
  probe: HealthProbe,
  timeoutMs: number,
): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  let exitedEarly = false;
  void component.exited.then(() => {
    exitedEarly = true;
  });
  for (;;) {
    if (exitedEarly) {
      const exit = await component.exited;
      throw new Error(
        `${component.name} ${describeExit(exit)} before becoming ready; end of ${component.logPath}:\n` +
          (await logTail(component.logPath)),
      );
    }
    const answer = await requestOnce(probe).catch((error: unknown) => ({
      status: 0,
      body: error instanceof Error ? error.message : String(error),
    }));
    if (answer.status === 200) return;
    const lastProblem =
      answer.status === 0 ? answer.body : `HTTP ${answer.status}: ${answer.body.slice(0, 2000)}`;
    if (Date.now() > deadline) {
      throw new Error(
        `${component.name} was not ready after ${timeoutMs} ms (${probe.url}: ${lastProblem}); ` +
          `end of ${component.logPath}:\n${await logTail(component.logPath)}`,
      );
    }
    await new Promise((resolve) => setTimeout(resolve, pollIntervalMs));
  }
}

function requestOnce(probe: HealthProbe): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const url = new URL(probe.url);
    const onResponse = (response: http.IncomingMessage): void => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () =>
        resolve({ status: response.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
      );
      response.on('error', reject);
    };
    const request =
      url.protocol === 'https:'
        ? https.get(
            url,
            {
              ca: probe.ca,
              cert: probe.clientCert,
              key: probe.clientKey,
              // Only for components whose serving certificate we did not issue; every one of them is on loopback.
              rejectUnauthorized: probe.ca !== undefined,
              agent: false,
              timeout: 2000,
            },
            onResponse,
          )
        : http.get(url, { agent: false, timeout: 2000 }, onResponse);
    request.on('timeout', () => request.destroy(new Error('timed out')));
    request.on('error', reject);
  });
}
