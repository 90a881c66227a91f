/**
 * The HTTP JSON client every REST adapter shares: one undici dispatcher per device (its own, with
 * the device's TLS settings, or one injected by a test or a proxy), per-request timeouts, one retry
 * on a fresh connection for a read that failed on its socket, JSON bodies both ways (a body that is
 * not JSON comes back as its text), and a request that got no answer turned into the adapter's own
 * error by `unreachable`. Authentication, sessions and the meaning of statuses stay with each
 * vendor's client: this is only the wire.
 */
import { Agent, type Dispatcher, type FormData, request } from 'undici';
import { withFreshRetry } from '../runtime/fresh-retry.ts';

export interface DeviceHttpOptions {
  /** The device's base address (`https://host[:port]`); paths are resolved against it. */
  url: string;
  /** Accept the device's certificate unchecked (a self-signed management certificate). */
  insecureSkipVerify?: boolean;
  /** PEM CAs trusted beside the system's (a private CA). */
  ca?: string;
  /** A dispatcher of the caller's (tests, proxies): used as given, never closed here. */
  dispatcher?: Dispatcher;
  /** Per-request timeout for the answer's headers and its body. */
  timeoutMs: number;
  /** The adapter's error for a request that got no answer (refused, reset, timed out). */
  unreachable: (message: string, cause: unknown) => Error;
}

/** A request body: JSON, text/plain, or multipart form data (a file upload). */
export type DeviceBody = { json: unknown } | { text: string } | { form: FormData };

export interface DeviceReply {
  status: number;
  /** The parsed JSON answer; its text when it is not JSON; undefined when empty. */
  body: unknown;
  /** The raw text of the answer (for error messages). */
  text: string;
  headers: Record<string, string | string[] | undefined>;
}

export class DeviceHttp {
  private readonly dispatcher: Dispatcher;
  private readonly ownsDispatcher: boolean;
  /** The connection options of our own dispatcher (a read's fresh-connection retry uses them). */
  private readonly connect: { rejectUnauthorized: boolean; ca?: string };
  private closed = false;

  constructor(private readonly opts: DeviceHttpOptions) {
    this.ownsDispatcher = opts.dispatcher === undefined;
    this.connect = { rejectUnauthorized: !opts.insecureSkipVerify, ...(opts.ca ? { ca: opts.ca } : {}) };
    this.dispatcher = opts.dispatcher ?? new Agent({ connect: this.connect, keepAliveTimeout: 10_000 });
  }

  /** One request; `path` may carry a query. Any status comes back; only no answer throws. */
  async send(
    method: Dispatcher.HttpMethod,
    path: string,
    body?: DeviceBody,
    headers: Record<string, string> = {},
  ): Promise<DeviceReply> {
    const payload =
      body === undefined
        ? undefined
        : 'json' in body
          ? { body: JSON.stringify(body.json), type: 'application/json' }
          : 'text' in body
            ? { body: body.text, type: 'text/plain' }
            : { body: body.form, type: undefined };
    let res: Dispatcher.ResponseData;
    try {
      res = await withFreshRetry(
        method,
        this.dispatcher,
        this.ownsDispatcher ? this.connect : undefined,
        (dispatcher) =>
          request(new URL(path, this.opts.url), {
            method,
            dispatcher,
            headers: {
              accept: 'application/json',
              ...(payload?.type ? { 'content-type': payload.type } : {}),
              ...headers,
            },
            ...(payload ? { body: payload.body } : {}),
            headersTimeout: this.opts.timeoutMs,
            bodyTimeout: this.opts.timeoutMs,
          }),
      );
    } catch (err) {
      throw this.opts.unreachable(
        `${method} ${path}: ${err instanceof Error ? err.message : String(err)}`,
        err,
      );
    }
    const text = await res.body.text();
    return { status: res.statusCode, body: parseJson(text), text, headers: res.headers };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    if (this.ownsDispatcher) await this.dispatcher.close();
  }
}

/** A JSON answer parsed; text that is not JSON as it is; nothing as undefined. */
function parseJson(text: string): unknown {
  if (!text) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}
