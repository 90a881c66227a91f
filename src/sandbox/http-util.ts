/**
 * Writing JSON answers and Status failures.
 */
import type { ServerResponse } from 'node:http';
import type { ApiError } from './status.ts';

export function send(
  res: ServerResponse,
  code: number,
  body: string | object,
  extraHeaders: Record<string, string> = {},
): void {
  const text = typeof body === 'string' ? body : JSON.stringify(body);
  res.writeHead(code, {
    'Content-Type': 'application/json',
    'Cache-Control': 'no-cache, private',
    ...extraHeaders,
  });
  res.end(text);
}

export function sendError(res: ServerResponse, err: ApiError): void {
  if (res.headersSent) {
    res.end();
    return;
  }
  send(res, err.code, err.status);
}
