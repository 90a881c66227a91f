/**
 * Output encoding for haproxy.cfg, so a value that reaches the renderer can never be more than one
 * argument, whatever the model's checks let through: every argument we write from a Kubernetes
 * value is double-quoted, and every byte outside a small safe set is written as `\xNN`, which
 * HAProxy's parser decodes inside double quotes (so a quote, `$`, `#`, a backslash, a space or a
 * newline is data, never syntax). Section and server names, which cannot be quoted, are checked
 * against HAProxy's own character set instead.
 */

/** Bytes written as they are inside double quotes: no quote, `$`, backslash, `#` or whitespace. */
const SAFE = /^[A-Za-z0-9/._~:@%+,;=^()[\]?*|{}!&<>-]$/;

export class HaproxyEncodeError extends Error {
  readonly code = 'Invalid';
  constructor(message: string) {
    super(message);
    this.name = 'HaproxyEncodeError';
  }
}

/** One configuration argument holding exactly `value`. A NUL byte cannot be written: refused. */
export function quoteArg(value: string): string {
  if (value.includes('\u0000')) throw new HaproxyEncodeError('a NUL byte cannot be written to haproxy.cfg');
  let out = '"';
  for (const byte of Buffer.from(value, 'utf8')) {
    const ch = String.fromCharCode(byte);
    out += byte < 0x80 && SAFE.test(ch) ? ch : `\\x${byte.toString(16).padStart(2, '0')}`;
  }
  return `${out}"`;
}

/** The inverse of quoteArg, for reading our own arguments back and for tests. */
export function unquoteArg(text: string): string {
  if (!text.startsWith('"') || !text.endsWith('"')) return text;
  const bytes: number[] = [];
  const body = text.slice(1, -1);
  for (let i = 0; i < body.length; i++) {
    if (body[i] === '\\' && body[i + 1] === 'x') {
      bytes.push(Number.parseInt(body.slice(i + 2, i + 4), 16));
      i += 3;
    } else bytes.push(body.charCodeAt(i));
  }
  return Buffer.from(bytes).toString('utf8');
}

/**
 * Data kept in a `description`, a comment or a `k=v` word: every byte outside `[A-Za-z0-9._-]` is
 * percent-encoded (`'`, `!`, `*`, `(`, `)` and `~` too, which encodeURIComponent leaves raw and
 * which HAProxy reads as quotes or syntax), so no byte of user data is syntax in haproxy.cfg,
 * whichever transport writes it. `decodeURIComponent` reads it back.
 */
export const pct = (v: string): string =>
  encodeURIComponent(v).replace(/[!'()*~]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);

/** Names of proxies (frontends, backends) and servers: HAProxy allows letters, digits, '-_.:'. */
export const NAME = /^[A-Za-z0-9_.:-]+$/;

export const nameProblem = (what: string, name: string): string | undefined =>
  NAME.test(name) ? undefined : `${what} ${JSON.stringify(name.slice(0, 80))} is not a valid HAProxy name`;

/**
 * A value as one log-format argument (a header value HAProxy sends): `%` doubled so it is never
 * read as a fetch, an empty value as the empty string fetch, then quoted as one argument.
 */
export const logFormatArg = (v: string): string => quoteArg(v === '' ? '%[str()]' : v.replaceAll('%', '%%'));
