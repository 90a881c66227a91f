/**
 * Typed errors with stable codes. Every code is listed in docs/errors.md; tests keep the two in step.
 */
export const ErrorCodes = {
  CONFIG_INVALID: 'NPL_CONFIG_INVALID',
  FLAG_INVALID: 'NPL_FLAG_INVALID',
  INPUT_LIMIT: 'NPL_INPUT_LIMIT',
  KUBECONFIG_MISSING: 'NPL_KUBECONFIG_MISSING',
  INFORMER_LIST_FAILED: 'NPL_INFORMER_LIST_FAILED',
  INFORMER_WATCH_FAILED: 'NPL_INFORMER_WATCH_FAILED',
  SANDBOX_LISTEN_FAILED: 'NPL_SANDBOX_LISTEN_FAILED',
  SPEC_MISSING: 'NPL_SPEC_MISSING',
  RULES_FAILED: 'NPL_RULES_FAILED',
  ANTREA_NPL_ACTIVE: 'NPL_ANTREA_NPL_ACTIVE',
  ANNOTATION_PATCH_FAILED: 'NPL_ANNOTATION_PATCH_FAILED',
  PORTS_EXHAUSTED: 'NPL_PORTS_EXHAUSTED',
  APPLY_FAILED: 'NPL_APPLY_FAILED',
  LEADERSHIP_LOST: 'NPL_LEADERSHIP_LOST',
  SHUTDOWN_TIMEOUT: 'NPL_SHUTDOWN_TIMEOUT',
  ADAPTER_CHECK_FAILED: 'NPL_ADAPTER_CHECK_FAILED',
  STATE_UNAVAILABLE: 'NPL_STATE_UNAVAILABLE',
  UNKNOWN_NODE: 'NPL_UNKNOWN_NODE',
  DELETE_CONFIG_FAILED: 'NPL_DELETE_CONFIG_FAILED',
  DEMO_RUNNING: 'NPL_DEMO_RUNNING',
  DEMO_ADDRESS_IN_USE: 'NPL_DEMO_ADDRESS_IN_USE',
} as const;

export type ErrorCode = (typeof ErrorCodes)[keyof typeof ErrorCodes];

export class NplError extends Error {
  readonly code: ErrorCode;
  constructor(code: ErrorCode, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'NplError';
    this.code = code;
  }
}

export function errorMessage(err: unknown): string {
  if (err instanceof Error) return err.message;
  return String(err);
}
