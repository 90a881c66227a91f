/**
 * The upstream WebSocket check (HTTPRouteBackendProtocolWebSocket): dial `ws://<gateway>/ws` with
 * an Origin, send a text frame and a binary frame, and each must come back unchanged; the whole
 * exchange must succeed as many times in a row as an HTTP expectation (upstream's
 * AwaitConvergence with RequiredConsecutiveSuccesses) within the consistency timeout.
 */
import { WebSocket } from 'undici';
import type { Timeouts } from './status.ts';
import { ConformanceFailure } from './status.ts';

/** One connection: why it failed, or nothing. */
export async function webSocketEcho(
  gwAddr: string,
  origin: string,
  limitMs = 5000,
): Promise<string | undefined> {
  const ws = new WebSocket(`ws://${gwAddr}/ws`, { headers: { origin } });
  ws.binaryType = 'arraybuffer';
  const inbox: (string | Uint8Array)[] = [];
  let waiting: (() => void) | undefined;
  let failure: string | undefined;
  ws.addEventListener('message', (e) => {
    inbox.push(typeof e.data === 'string' ? e.data : new Uint8Array(e.data as ArrayBuffer));
    waiting?.();
  });
  const failed = (why: string) => {
    failure ??= why;
    waiting?.();
  };
  ws.addEventListener('error', () => failed('connection failed'));
  ws.addEventListener('close', (e) => failed(`closed (${e.code})`));
  const next = async (): Promise<string | Uint8Array | undefined> => {
    const until = Date.now() + limitMs;
    while (!inbox.length && failure === undefined && Date.now() < until)
      await new Promise<void>((r) => {
        waiting = r;
        setTimeout(r, 100);
      });
    return inbox.shift();
  };
  try {
    await new Promise<void>((resolve) => {
      ws.addEventListener('open', () => resolve());
      ws.addEventListener('error', () => resolve());
      ws.addEventListener('close', () => resolve());
      setTimeout(resolve, limitMs);
    });
    if (ws.readyState !== WebSocket.OPEN) return `failed to dial: ${failure ?? 'no answer'}`;
    const text = 'Websocket Support!';
    ws.send(text);
    const textReply = await next();
    if (textReply !== text)
      return `text frame: got ${JSON.stringify(textReply)}, want ${JSON.stringify(text)}${failure ? ` (${failure})` : ''}`;
    const bytes = new Uint8Array([1, 2, 3, 4, 5, 6, 7]);
    ws.send(bytes);
    const binaryReply = await next();
    if (
      !(binaryReply instanceof Uint8Array) ||
      Buffer.compare(Buffer.from(binaryReply), Buffer.from(bytes)) !== 0
    )
      return `binary frame: got ${binaryReply === undefined ? 'nothing' : JSON.stringify([...(binaryReply as Uint8Array)])}`;
    return undefined;
  } finally {
    ws.close();
  }
}

/** AwaitConvergence: `consecutive` exchanges in a row succeed within the consistency timeout. */
export async function expectWebSocketEcho(
  gwAddr: string,
  origin: string,
  t: Timeouts,
  consecutive = 3,
): Promise<void> {
  const deadline = Date.now() + t.consistencyMs;
  let inRow = 0;
  let why = 'not tried';
  while (Date.now() < deadline) {
    const failed = await webSocketEcho(gwAddr, origin).catch((err: unknown) => (err as Error).message);
    if (failed === undefined) {
      if (++inRow >= consecutive) return;
      continue;
    }
    why = failed;
    inRow = 0;
    await new Promise((r) => setTimeout(r, t.pollMs));
  }
  throw new ConformanceFailure(
    `ws://${gwAddr}/ws: the echo did not succeed ${consecutive} times in a row within ${t.consistencyMs} ms (last: ${why})`,
  );
}
