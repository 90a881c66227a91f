/**
 * A running container's log as the kubelet keeps and answers it: what its process writes to
 * stdout and stderr, line by line with the time it was read, the newest LOG_LINES kept across
 * restarts (as the kubelet rotates a container's log); answered with `sinceTime`, `sinceSeconds`,
 * `tailLines` and `timestamps` as `kubectl logs` asks (a value the API server would refuse is a
 * 400).
 */
import type { Readable } from 'node:stream';
import { badRequest } from './status.ts';

/** A line a container wrote (stdout or stderr), when the kubelet read it. */
export interface LogLine {
  at: number;
  text: string;
}

const LOG_LINES = 10_000;
const LOG_LINE_BYTES = 16 * 1024;

/** Reads a container's output into its log, line by line, the oldest dropped past LOG_LINES. */
export function keepLog(out: Readable, log: LogLine[]): void {
  let partial = '';
  out.setEncoding('utf8');
  out.on('data', (chunk: string) => {
    const lines = (partial + chunk).split('\n');
    partial = lines.pop()!.slice(0, LOG_LINE_BYTES);
    const at = Date.now();
    for (const text of lines) log.push({ at, text: text.slice(0, LOG_LINE_BYTES) });
    if (log.length > LOG_LINES) log.splice(0, log.length - LOG_LINES);
  });
  // The pipe never holds the sandbox open.
  (out as Readable & { unref?: () => void }).unref?.();
}

/** A log's lines as the kubelet answers them: since a time, the last N, with timestamps. */
export function logText(lines: LogLine[], q: URLSearchParams): string {
  const sinceTime = q.get('sinceTime');
  const sinceSeconds = q.get('sinceSeconds');
  const since =
    sinceTime !== null
      ? Date.parse(sinceTime)
      : sinceSeconds !== null
        ? Date.now() - Number(sinceSeconds) * 1000
        : NaN;
  if ((sinceTime !== null || sinceSeconds !== null) && !Number.isFinite(since))
    throw badRequest(`invalid sinceTime or sinceSeconds`);
  let kept = Number.isFinite(since) ? lines.filter((l) => l.at >= since) : lines;
  const tail = q.get('tailLines');
  if (tail !== null) {
    const n = Number(tail);
    if (!Number.isInteger(n) || n < 0) throw badRequest(`invalid tailLines ${tail}`);
    kept = n === 0 ? [] : kept.slice(-n);
  }
  const stamp = q.get('timestamps') === 'true';
  return kept.map((l) => `${stamp ? `${new Date(l.at).toISOString()} ` : ''}${l.text}\n`).join('');
}
