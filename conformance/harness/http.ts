/**
 * The upstream suite's HTTP assertions (conformance/utils/http), written again: a request to a
 * Gateway's address must be answered as expected a number of times in a row (3) within a bound,
 * compared as CompareRoundTrip compares (status; for a 200 the request the backend saw: path,
 * method, host, headers, namespace, the Pod's name prefix; for a redirect its location).
 * Redirects are never followed.
 */
import { connect } from 'node:http2';
import { Agent, request } from 'undici';
import type { CapturedRequest } from './echo.ts';
import { ConformanceFailure, type Timeouts } from './status.ts';

export interface Req {
  host?: string;
  method?: string;
  path: string;
  headers?: Record<string, string>;
  /**
   * `h2c`: HTTP/2 with prior knowledge (the suite's H2CPriorKnowledgeProtocol); `h2`: HTTP/2 over
   * TLS, offered by ALPN (H2Protocol; with TLS options); HTTP/1.1 when absent.
   */
  protocol?: 'h2c' | 'h2';
  /** The server name the backend must have been asked for over TLS (upstream's Request.SNI). */
  sni?: string;
  /** A certificate (PEM) the backend must have been presented over TLS (upstream's Request.ClientCert). */
  clientCert?: string;
}

export interface Expected {
  request: Req;
  /** What the backend must see (default: the request as sent). */
  expectedRequest?: Partial<Req> & { absentHeaders?: string[] };
  response?: {
    statusCode?: number;
    statusCodes?: number[];
    headers?: Record<string, string>;
    /** Each header's value must be one of these (upstream's ValidHeaderValues). */
    validHeaderValues?: Record<string, string[]>;
    absentHeaders?: string[];
    /** Spaces ignored when comparing response header values (upstream's IgnoreWhitespace). */
    ignoreWhitespace?: boolean;
  };
  /** Response headers the echo backend is asked to set (echo-basic's X-Echo-Set-Header). */
  backendSetResponseHeaders?: Record<string, string>;
  /** The answering Pod's name starts with this. */
  backend?: string;
  namespace?: string;
  redirectRequest?: { scheme?: string; host?: string; port?: string; path?: string };
}

export interface RoundTrip {
  status: number;
  headers: Record<string, string>;
  captured?: CapturedRequest;
}

/** HTTPS as the upstream TLS round tripper does it: SNI the request's host, the server's certificate trusted. */
export interface TlsOptions {
  ca: string;
  servername: string;
  /** The client certificate presented when the server asks for one (upstream's GetClientCertificateHook). */
  client?: { cert: string; key: string } | undefined;
}

export async function roundTrip(gwAddr: string, r: Req, tls?: TlsOptions): Promise<RoundTrip> {
  const dispatcher = tls
    ? new Agent({
        connect: {
          ca: tls.ca,
          servername: tls.servername,
          rejectUnauthorized: true,
          checkServerIdentity: goHostnameCheck,
          ...(tls.client ? { cert: tls.client.cert, key: tls.client.key } : {}),
        },
      })
    : undefined;
  try {
    return r.protocol === 'h2c' || (r.protocol === 'h2' && tls)
      ? await sendH2(gwAddr, r, r.protocol === 'h2' ? tls : undefined)
      : await send(gwAddr, r, dispatcher);
  } finally {
    await dispatcher?.close();
  }
}

/**
 * The server name checked as Go's crypto/x509 checks it (the upstream suite is a Go client): a
 * DNS SAN's leading `*` stands for exactly one label, so `*.org` covers `example.org`, which
 * Node's own check refuses for a wildcard over a top-level domain.
 */
export function goHostnameCheck(host: string, cert: { subjectaltname?: string }): Error | undefined {
  const want = host.toLowerCase().replace(/\.$/, '').split('.');
  const sans = (cert.subjectaltname ?? '')
    .split(', ')
    .filter((s) => s.startsWith('DNS:'))
    .map((s) => s.slice(4).toLowerCase().replace(/\.$/, ''));
  const matches = (pattern: string) => {
    const p = pattern.split('.');
    return (
      p.length === want.length &&
      p.every((label, i) => label === want[i] || (i === 0 && label === '*' && want[0] !== ''))
    );
  };
  return sans.some(matches)
    ? undefined
    : new Error(`${host} is not in the certificate's DNS names (${sans.join(', ')})`);
}

async function send(gwAddr: string, r: Req, dispatcher: Agent | undefined): Promise<RoundTrip> {
  const res = await request(`${dispatcher ? 'https' : 'http'}://${gwAddr}${r.path}`, {
    ...(dispatcher ? { dispatcher } : {}),
    method: (r.method ?? 'GET') as 'GET',
    headers: { ...(r.host ? { host: r.host } : {}), ...(r.headers ?? {}) },
    headersTimeout: 5000,
    bodyTimeout: 5000,
    maxRedirections: 0,
  } as Parameters<typeof request>[1]);
  const text = await res.body.text();
  const headers: Record<string, string> = {};
  for (const [k, v] of Object.entries(res.headers))
    headers[k.toLowerCase()] = Array.isArray(v) ? v.join(',') : String(v);
  let captured: CapturedRequest | undefined;
  if (res.statusCode === 200 && (headers['content-type'] ?? '').includes('json')) {
    try {
      captured = JSON.parse(text) as CapturedRequest;
    } catch {
      captured = undefined;
    }
  }
  return { status: res.statusCode, headers, ...(captured ? { captured } : {}) };
}

/**
 * One request in HTTP/2 on a connection of its own: with prior knowledge, or over TLS (`tls`: the
 * server name sent and checked, ALPN h2 only, as Go's HTTP/2 transport asks).
 */
function sendH2(gwAddr: string, r: Req, tls?: TlsOptions): Promise<RoundTrip> {
  return new Promise((resolve, reject) => {
    const session = tls
      ? connect(`https://${gwAddr}`, {
          ca: tls.ca,
          servername: tls.servername,
          checkServerIdentity: goHostnameCheck,
          ALPNProtocols: ['h2'],
        })
      : connect(`http://${gwAddr}`);
    const timer = setTimeout(() => session.destroy(new Error('no answer within 5000 ms')), 5000);
    session.on('error', (err) => {
      clearTimeout(timer);
      reject(err);
    });
    const stream = session.request({
      ':method': r.method ?? 'GET',
      ':path': r.path,
      ':authority': r.host ?? gwAddr,
      ...Object.fromEntries(Object.entries(r.headers ?? {}).map(([k, v]) => [k.toLowerCase(), v])),
    });
    const headers: Record<string, string> = {};
    let status = 0;
    let text = '';
    stream.on('response', (h) => {
      status = Number(h[':status']);
      for (const [k, v] of Object.entries(h)) if (!k.startsWith(':')) headers[k] = String(v);
    });
    stream.setEncoding('utf8');
    stream.on('data', (d: string) => (text += d));
    stream.on('error', () => undefined);
    stream.on('close', () => {
      clearTimeout(timer);
      session.close();
      let captured: CapturedRequest | undefined;
      if (status === 200 && (headers['content-type'] ?? '').includes('json')) {
        try {
          captured = JSON.parse(text) as CapturedRequest;
        } catch {
          captured = undefined;
        }
      }
      if (status === 0) reject(new Error('the stream closed without a response'));
      else resolve({ status, headers, ...(captured ? { captured } : {}) });
    });
    stream.end();
  });
}

/** Why a round trip does not meet the expectation, if it does not. */
export function compare(gwAddr: string, rt: RoundTrip, e: Expected): string | undefined {
  const codes = e.response?.statusCodes ?? [e.response?.statusCode ?? 200];
  if (!codes.includes(rt.status)) return `status ${rt.status}, want one of ${codes.join(', ')}`;
  if (rt.status === 200 || rt.status === 204) {
    // As upstream's round tripper: an answer that is not the echo's JSON (a preflight the gateway
    // answered) is taken as the request sent, its method alone.
    const c: CapturedRequest = rt.captured ?? {
      path: '',
      host: '',
      method: e.request.method ?? 'GET',
      proto: '',
      headers: {},
      namespace: '',
      pod: '',
    };
    // As upstream: what the backend must see is the request sent, unless the test says otherwise.
    const want: Partial<Req> & { absentHeaders?: string[] } = e.expectedRequest ?? e.request;
    if (want.host && c.host !== want.host) return `backend saw host ${c.host}, want ${want.host}`;
    const path = want.path ?? e.request.path;
    if (c.path !== path) return `backend saw path ${c.path}, want ${path}`;
    if (c.method !== (want.method ?? 'GET'))
      return `backend saw method ${c.method}, want ${want.method ?? 'GET'}`;
    if ((e.namespace ?? '') !== c.namespace)
      return `answered from namespace ${c.namespace}, want ${e.namespace ?? ''}`;
    const seen: Record<string, string> = {};
    for (const [k, v] of Object.entries(c.headers ?? {})) seen[k.toLowerCase()] = v.join(',');
    for (const [k, v] of Object.entries(want.headers ?? {})) {
      if (seen[k.toLowerCase()] !== v)
        return `backend saw ${k}: ${seen[k.toLowerCase()] ?? '(none)'}, want ${v}`;
    }
    for (const k of want.absentHeaders ?? []) {
      if (k.toLowerCase() in seen) return `backend saw ${k}: ${seen[k.toLowerCase()]}, want none`;
    }
    const squeeze = (v: string) => (e.response?.ignoreWhitespace ? v.replaceAll(' ', '') : v);
    for (const [k, vs] of Object.entries(e.response?.validHeaderValues ?? {})) {
      const got = rt.headers[k.toLowerCase()];
      if (got === undefined) return `response has no ${k}`;
      if (!vs.map(squeeze).includes(squeeze(got)))
        return `response ${k}: ${got}, want one of ${vs.join(' | ')}`;
    }
    for (const [k, v] of Object.entries(e.response?.headers ?? {})) {
      const got = rt.headers[k.toLowerCase()];
      if (got === undefined || squeeze(got) !== squeeze(v))
        return `response ${k}: ${got ?? '(none)'}, want ${v}`;
    }
    for (const k of e.response?.absentHeaders ?? []) {
      if (k.toLowerCase() in rt.headers) return `response has ${k}, want none`;
    }
    if (!c.pod.startsWith(e.backend ?? '')) return `answered by Pod ${c.pod}, want ${e.backend}*`;
    // As upstream: the SNI the backend saw, where the test names one.
    if (want.sni && c.tls?.serverName !== want.sni)
      return `backend saw SNI ${c.tls ? JSON.stringify(c.tls.serverName) : '(no TLS)'}, want ${want.sni}`;
    // As upstream: the certificate presented to the backend among those it captured (PEM, its
    // line endings aside: the harness's certificates are written with CRLF).
    const pem = (s: string) => s.replace(/\r\n/g, '\n').trim();
    if (want.clientCert && !(c.tls?.peerCertificates ?? []).some((p) => pem(p) === pem(want.clientCert!)))
      return `backend was not presented the client certificate (saw ${c.tls?.peerCertificates?.length ?? 0})`;
  } else if (rt.status >= 300 && rt.status < 400 && e.redirectRequest) {
    const loc = rt.headers.location;
    if (!loc) return 'a redirect without Location';
    const u = new URL(loc, `http://${e.request.host ?? gwAddr}`);
    const want = e.redirectRequest;
    // As upstream: an unsaid scheme is the request's, an unsaid host is whatever came back.
    const scheme = want.scheme ?? 'http';
    const host = want.host ?? u.hostname;
    const path = want.path ?? e.request.path;
    if (u.protocol !== `${scheme}:`) return `redirected to scheme ${u.protocol}, want ${scheme}`;
    if (u.hostname !== host) return `redirected to host ${u.hostname}, want ${host}`;
    if (
      want.port !== undefined
        ? u.port !== want.port
        : !['', scheme === 'https' ? '443' : '80'].includes(u.port)
    )
      return `redirected to port ${u.port || '(none)'}, want ${want.port ?? 'the scheme default'}`;
    if (u.pathname + u.search !== path) return `redirected to path ${u.pathname}${u.search}, want ${path}`;
  }
  return undefined;
}

/** The request with the response headers the backend is to set, as upstream's MakeRequest adds them. */
export function withEchoHeaders(e: Expected): Req {
  const set = Object.entries(e.backendSetResponseHeaders ?? {});
  if (!set.length) return e.request;
  return {
    ...e.request,
    headers: { ...e.request.headers, 'X-Echo-Set-Header': set.map(([k, v]) => `${k}:${v}`).join(',') },
  };
}

/**
 * MakeRequestAndExpectEventuallyConsistentResponse: the expected answer `consecutive` times in a
 * row before the bound; a connection error counts as a miss. `e` may be made afresh for each
 * probe (upstream's retry tests give every probe a new uuid).
 */
export async function expectEventually(
  gwAddr: string,
  expected: Expected | (() => Expected),
  t: Timeouts,
  consecutive = 3,
  tls?: TlsOptions,
): Promise<void> {
  const deadline = Date.now() + t.consistencyMs;
  const probe = typeof expected === 'function' ? expected : () => expected;
  let e = probe();
  let inRow = 0;
  let why = 'not tried';
  while (Date.now() < deadline) {
    e = probe();
    try {
      const d = compare(gwAddr, await roundTrip(gwAddr, withEchoHeaders(e), tls), e);
      if (d === undefined) {
        if (++inRow >= consecutive) return;
        continue;
      }
      why = d;
    } catch (err) {
      why = (err as Error).message;
    }
    inRow = 0;
    await new Promise((r) => setTimeout(r, t.pollMs));
  }
  const r = e.request;
  throw new ConformanceFailure(
    `${r.method ?? 'GET'} ${r.host ?? ''}${r.path} at ${gwAddr}: not answered as expected ${consecutive} times in a row within ${t.consistencyMs} ms (last: ${why})`,
  );
}

/**
 * MakeRequestAndExpectFailure (WaitForConsistentFailureResponse): `consecutive` answers in a row
 * that are not 200 and not a timeout (408, 504) before the bound; a 200 fails at once, a
 * connection error counts as a miss.
 */
export async function expectFailure(gwAddr: string, r: Req, t: Timeouts, consecutive = 5): Promise<void> {
  const deadline = Date.now() + t.consistencyMs;
  let inRow = 0;
  let why = 'not tried';
  while (Date.now() < deadline) {
    try {
      const { status } = await roundTrip(gwAddr, r);
      if (status === 200)
        throw new ConformanceFailure(`${r.host ?? ''}${r.path} at ${gwAddr} should fail, and answered 200`);
      if (status !== 408 && status !== 504) {
        if (++inRow >= consecutive) return;
        continue;
      }
      why = `status ${status}`;
    } catch (err) {
      if (err instanceof ConformanceFailure) throw err;
      why = (err as Error).message;
    }
    inRow = 0;
    await new Promise((res) => setTimeout(res, t.pollMs));
  }
  throw new ConformanceFailure(
    `${r.host ?? ''}${r.path} at ${gwAddr}: not failed ${consecutive} times in a row within ${t.consistencyMs} ms (last: ${why})`,
  );
}
