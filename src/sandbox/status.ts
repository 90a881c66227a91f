/**
 * Kubernetes `kind: Status` failures with the reasons, codes and messages the real API server uses.
 */
export interface StatusCause {
  reason: string;
  message: string;
  field?: string;
}

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  causes?: StatusCause[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message: string;
  reason: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  readonly status: StatusBody;
  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.name = 'ApiError';
    this.status = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message,
      reason,
      ...(details ? { details } : {}),
      code,
    };
  }
  get code(): number {
    return this.status.code;
  }
}

/** What a Status names: `pods`, or `ingresses.networking.k8s.io`. */
export interface Subject {
  group: string;
  plural: string;
}

function qualified(s: Subject): string {
  return s.group ? `${s.plural}.${s.group}` : s.plural;
}

function details(s: Subject, name: string): StatusDetails {
  return s.group ? { name, group: s.group, kind: s.plural } : { name, kind: s.plural };
}

export const notFound = (s: Subject, name: string): ApiError =>
  new ApiError(404, 'NotFound', `${qualified(s)} "${name}" not found`, details(s, name));

export const alreadyExists = (s: Subject, name: string): ApiError =>
  new ApiError(409, 'AlreadyExists', `${qualified(s)} "${name}" already exists`, details(s, name));

export const conflict = (s: Subject, name: string, why?: string): ApiError =>
  new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualified(s)} "${name}": ${
      why ?? 'the object has been modified; please apply your changes to the latest version and try again'
    }`,
    details(s, name),
  );

export const badRequest = (message: string): ApiError => new ApiError(400, 'BadRequest', message);

export const methodNotAllowed = (): ApiError =>
  new ApiError(405, 'MethodNotAllowed', 'the server does not allow this method on the requested resource');

export const unsupportedMediaType = (type: string, accepted: string[]): ApiError =>
  new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format (${type}) - accepted media types include: ${accepted.join(', ')}`,
  );

export const entityTooLarge = (limit: number): ApiError =>
  new ApiError(413, 'RequestEntityTooLarge', `Request entity too large: limit is ${limit}`);

export const expired = (requested: number, oldest: number): ApiError =>
  new ApiError(410, 'Expired', `too old resource version: ${requested} (${oldest})`);

export const unauthorized = (): ApiError => new ApiError(401, 'Unauthorized', 'Unauthorized');

export const notFoundPath = (): ApiError =>
  new ApiError(404, 'NotFound', 'the server could not find the requested resource');

/** 422 Invalid: `Service "x" is invalid: [cause, cause]` as the real server words it. */
export function invalid(kind: string, group: string, name: string, causes: StatusCause[]): ApiError {
  const parts = causes.map((c) => (c.field ? `${c.field}: ${c.message}` : c.message));
  const summary = parts.length === 1 ? parts[0] : `[${parts.join(', ')}]`;
  const d: StatusDetails = group ? { name, group, kind, causes } : { name, kind, causes };
  return new ApiError(
    422,
    'Invalid',
    `${kind}${group ? `.${group}` : ''} "${name}" is invalid: ${summary}`,
    d,
  );
}
