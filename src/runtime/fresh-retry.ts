/**
 * One retry on a fresh connection for an idempotent request that failed on its socket. A device
 * that is slow (a device running an 8 s declaration) or that closes idle keep-alive connections
 * on its own schedule resets a reused socket now and then; the request never reached it, and a
 * new connection answers. Taking that for a dead device would hold every write for nothing.
 */
import { Agent, type Dispatcher } from 'undici';

/** Error codes of a request that failed on its connection, not on the device's answer. */
const SOCKET_CODES = new Set(['ECONNRESET', 'EPIPE', 'UND_ERR_SOCKET', 'UND_ERR_CLOSED', 'ECONNABORTED']);

/** Whether the error (or one it wraps) is a socket failure. */
export function socketFailure(err: unknown): boolean {
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && SOCKET_CODES.has(code)) return true;
  }
  return false;
}

/**
 * `send(dispatcher)` on the shared dispatcher; where it is idempotent (GET, HEAD) and fails on its
 * socket, once more on a one-shot connection (`connect`: the shared one's options; closed after),
 * whose answer or error is final. An injected dispatcher (`connect` undefined: a test's, a
 * proxy's) is asked again instead: it decides what a connection is.
 */
export async function withFreshRetry<T>(
  method: string,
  shared: Dispatcher,
  connect: Agent.Options['connect'] | undefined,
  send: (dispatcher: Dispatcher) => Promise<T>,
): Promise<T> {
  try {
    return await send(shared);
  } catch (err) {
    if ((method !== 'GET' && method !== 'HEAD') || !socketFailure(err)) throw err;
    if (connect === undefined) return send(shared);
    const fresh = new Agent({ connect, pipelining: 0 });
    try {
      return await send(fresh);
    } finally {
      await fresh.close().catch(() => undefined);
    }
  }
}
