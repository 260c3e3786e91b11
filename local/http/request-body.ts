// The whole body of a request to one of the local emulators (the ARM emulator, the storage front), read
// into memory with a cap: their clients send small JSON and queue messages, and a runaway body must fail
// the one request rather than the emulator.
import type { IncomingMessage } from 'node:http';

/** The emulators' cap: far above any request the app sends (a VM body, a queue message). */
export const MAX_REQUEST_BODY_BYTES = 4 * 1024 * 1024;

export function readRequestBody(
  request: IncomingMessage,
  maxBytes: number = MAX_REQUEST_BODY_BYTES,
): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    request.on('data', (chunk: Buffer) => {
      size += chunk.length;
      if (size > maxBytes) {
        reject(new Error(`request body over ${maxBytes} bytes`));
        request.destroy();
        return;
      }
      chunks.push(chunk);
    });
    request.once('end', () => resolve(Buffer.concat(chunks)));
    request.once('error', reject);
  });
}
