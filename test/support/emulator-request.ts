// One HTTPS request to an ARM emulator, answered as status, headers and parsed JSON: what the tests of
// the emulator's own surfaces (routes the SDK has no call for, admin endpoints, raw error bodies) send.
import { request as httpsRequest } from 'node:https';
import type { ArmEmulator } from '../../local/arm-emulator/index.js';

export interface EmulatorAnswer {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  body: unknown;
}

/** `body`, when given, goes as JSON; `headers` are sent as they are (an ARM request needs a token). */
export function emulatorRequest(
  emulator: Pick<ArmEmulator, 'url' | 'caCertPem'>,
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<EmulatorAnswer> {
  const payload = options.body === undefined ? undefined : JSON.stringify(options.body);
  return new Promise((resolve, reject) => {
    const req = httpsRequest(
      new URL(path, emulator.url),
      {
        method,
        ca: emulator.caCertPem,
        headers: { ...(payload ? { 'content-type': 'application/json' } : {}), ...options.headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () => {
          const text = Buffer.concat(chunks).toString('utf8');
          resolve({
            status: res.statusCode ?? 0,
            headers: res.headers,
            body: text ? (JSON.parse(text) as unknown) : undefined,
          });
        });
      },
    );
    req.on('error', reject);
    req.end(payload);
  });
}
