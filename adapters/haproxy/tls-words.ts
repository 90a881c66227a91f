/**
 * The TLS words haproxy.cfg carries that both the writer (config.ts) and the readers (config-parse.ts,
 * policy-read.ts, the Data Plane transport) name: the system's CA store, and a bind's client
 * certificate validation as config.ts writes it (config-parse.ts reads exactly these back).
 */

/** HAProxy's name for the system's store of public CAs. */
export const SYSTEM_CA_FILE = '@system-ca';

/** Client certificates required at a bind. */
export const CLIENT_REQUIRED = 'verify required';
/** Client certificates asked, the leaf's and the chain's errors ignored (AllowInsecureFallback). */
export const CLIENT_FALLBACK = 'verify optional ca-ignore-err all crt-ignore-err all';
