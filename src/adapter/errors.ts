/**
 * Adapter errors: one base class and one list of stable codes, documented in docs/errors.md (a
 * test keeps the two in step). A code says what went wrong in the load balancer's terms; whether
 * retrying can help is `terminal`, fixed per code.
 */

/** Every code an adapter reports, with whether retrying can help (false) or not (true). */
export const ADAPTER_ERROR_CODES = {
  /** The device refused the object as invalid (bad input; retrying the same cannot help). */
  Invalid: true,
  /** The object is held by another owner on the device; left alone. */
  NotOwned: true,
  /** The adapter cannot express what was asked (UDP where the device balances none, ...). */
  Unsupported: true,
  /** The rendered configuration failed the device's own check (a configuration check). */
  ConfigInvalid: true,
  /** Left out of a bisecting configuration check (internal to an adapter that narrows a refused configuration down). */
  Skipped: true,
  /** The device cannot listen on the VIP: the address is not on its host. */
  BindFailed: true,
  /** The object to update or delete was not there; created on the next pass. */
  NotFound: false,
  /** The object to create was already there (someone else made it meanwhile). */
  AlreadyExists: false,
  /** Someone else wrote the object first (a version or checksum conflict). */
  Conflict: false,
  /** The object is still used by another (a pool by a virtual service). */
  InUse: false,
  /** An object this one needs did not go through first. */
  DependencyFailed: false,
  /** The device is busy with another write (a declaration in progress). */
  Busy: false,
  /** The device did not answer, or answered an error that may pass (5xx, timeout, refused). */
  Unavailable: false,
  /** The credentials were refused or lack a permission. */
  Unauthorized: false,
  /** The device answered something that is not what its API documents. */
  BadResponse: false,
  /** A write the device took but did not carry out (a failed reload, a failed task). */
  Failed: false,
  /** The device's declarative API is not installed (start-up check). */
  As3Missing: true,
  /** The device's declarative API is older than the oldest version we declare for (start-up check). */
  As3TooOld: true,
  /** The device's process did not start. */
  StartFailed: false,
  /** The device's control socket did not answer. */
  SocketFailed: false,
  /** The device refused a reload. */
  ReloadFailed: false,
  /** The device refused a runtime command (the adapter reloads instead). */
  CommandRefused: false,
} as const;

export type AdapterErrorCode = keyof typeof ADAPTER_ERROR_CODES;

export const isTerminalCode = (code: AdapterErrorCode): boolean => ADAPTER_ERROR_CODES[code];

/** The base of every adapter's errors: a stable code and whether retrying can help. */
export class AdapterError extends Error {
  readonly terminal: boolean;
  constructor(
    readonly code: AdapterErrorCode,
    message: string,
    options?: { cause?: unknown; terminal?: boolean },
  ) {
    super(message, options?.cause !== undefined ? { cause: options.cause } : undefined);
    this.name = 'AdapterError';
    this.terminal = options?.terminal ?? isTerminalCode(code);
  }
}

/** The code for an HTTP status a device answered. */
export function codeForStatus(status: number): AdapterErrorCode {
  if (status === 400 || status === 422) return 'Invalid';
  if (status === 401 || status === 403) return 'Unauthorized';
  if (status === 404) return 'NotFound';
  if (status === 409 || status === 412) return 'Conflict';
  if (status === 429 || status === 503) return 'Busy';
  return 'Unavailable';
}
