/**
 * What the real API server validates for the kinds served and npl-lb relies on: object names,
 * label and annotation syntax, required fields, and a few enumerations. Messages follow apimachinery.
 */
import type { NameRule, ResourceType } from './kinds.ts';
import type { JsonObject } from './openapi.ts';
import type { StatusCause } from './status.ts';

const SUBDOMAIN = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$/;
const LABEL1123 = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
const LABEL1035 = /^[a-z]([-a-z0-9]*[a-z0-9])?$/;
const QUALIFIED = /^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$/;
const LABEL_VALUE = /^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$/;
const MAX_ANNOTATIONS_BYTES = 256 * 1024;

export const invalidValue = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
  field,
});
export const required = (field: string, detail?: string): StatusCause => ({
  reason: 'FieldValueRequired',
  message: detail ? `Required value: ${detail}` : 'Required value',
  field,
});
export const notSupported = (field: string, value: unknown, allowed: string[]): StatusCause => ({
  reason: 'FieldValueNotSupported',
  message: `Unsupported value: ${JSON.stringify(value)}: supported values: ${allowed.map((a) => `"${a}"`).join(', ')}`,
  field,
});
export const forbidden = (field: string, detail: string): StatusCause => ({
  reason: 'FieldValueForbidden',
  message: `Forbidden: ${detail}`,
  field,
});

const NAME_MESSAGES: Record<Exclude<NameRule, 'pathSegment'>, [RegExp, number, string]> = {
  subdomain: [
    SUBDOMAIN,
    253,
    "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')",
  ],
  label1123: [
    LABEL1123,
    63,
    "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')",
  ],
  label1035: [
    LABEL1035,
    63,
    "a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '[a-z]([-a-z0-9]*[a-z0-9])?')",
  ],
};

export function validateName(rule: NameRule, name: string, field = 'metadata.name'): StatusCause[] {
  if (rule === 'pathSegment') {
    if (name === '.' || name === '..') return [invalidValue(field, name, `may not be '${name}'`)];
    if (name.includes('/') || name.includes('%')) {
      return [invalidValue(field, name, `may not contain '${name.includes('/') ? '/' : '%'}'`)];
    }
    return [];
  }
  const [re, max, msg] = NAME_MESSAGES[rule];
  const out: StatusCause[] = [];
  if (name.length > max) out.push(invalidValue(field, name, `must be no more than ${max} characters`));
  if (!re.test(name)) out.push(invalidValue(field, name, msg));
  return out;
}

function validateQualifiedKey(key: string, field: string): StatusCause[] {
  const slash = key.indexOf('/');
  const prefix = slash >= 0 ? key.slice(0, slash) : undefined;
  const name = slash >= 0 ? key.slice(slash + 1) : key;
  const out: StatusCause[] = [];
  if (prefix !== undefined && (prefix.length === 0 || prefix.length > 253 || !SUBDOMAIN.test(prefix))) {
    out.push(invalidValue(field, key, `prefix part ${NAME_MESSAGES.subdomain[2]}`));
  }
  if (name.length === 0 || name.length > 63 || !QUALIFIED.test(name)) {
    out.push(
      invalidValue(
        field,
        key,
        name.length > 63
          ? 'name part must be no more than 63 characters'
          : "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')",
      ),
    );
  }
  return out;
}

function asObject(v: unknown): JsonObject | undefined {
  return typeof v === 'object' && v !== null && !Array.isArray(v) ? (v as JsonObject) : undefined;
}

export function validateMetadata(t: ResourceType, obj: JsonObject): StatusCause[] {
  const meta = asObject(obj.metadata) ?? {};
  const out: StatusCause[] = [];
  const name = typeof meta.name === 'string' ? meta.name : '';
  if (!name) out.push(required('metadata.name', 'name or generateName is required'));
  else out.push(...validateName(t.nameRule, name));
  const labels = asObject(meta.labels) ?? {};
  for (const [k, v] of Object.entries(labels)) {
    out.push(...validateQualifiedKey(k, 'metadata.labels'));
    if (typeof v !== 'string' || v.length > 63 || !LABEL_VALUE.test(v)) {
      out.push(
        invalidValue(
          'metadata.labels',
          v,
          "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')",
        ),
      );
    }
  }
  const annotations = asObject(meta.annotations) ?? {};
  let size = 0;
  for (const [k, v] of Object.entries(annotations)) {
    out.push(...validateQualifiedKey(k.toLowerCase(), 'metadata.annotations'));
    size += k.length + (typeof v === 'string' ? v.length : 0);
  }
  if (size > MAX_ANNOTATIONS_BYTES) {
    out.push({
      reason: 'FieldValueTooLong',
      message: `Too long: must have at most ${MAX_ANNOTATIONS_BYTES} bytes`,
      field: 'metadata.annotations',
    });
  }
  return out;
}

const PROTOCOLS = ['SCTP', 'TCP', 'UDP'];
const SERVICE_TYPES = ['ClusterIP', 'ExternalName', 'LoadBalancer', 'NodePort'];

function validPort(v: unknown): boolean {
  return typeof v === 'number' && Number.isInteger(v) && v >= 1 && v <= 65535;
}

function validatePod(obj: JsonObject): StatusCause[] {
  const spec = asObject(obj.spec) ?? {};
  const out: StatusCause[] = [];
  const containers = Array.isArray(spec.containers) ? spec.containers : [];
  if (containers.length === 0) out.push(required('spec.containers'));
  const names = new Set<string>();
  containers.forEach((c0, i) => {
    const c = asObject(c0) ?? {};
    const f = `spec.containers[${i}]`;
    const name = typeof c.name === 'string' ? c.name : '';
    if (!name) out.push(required(`${f}.name`));
    else {
      out.push(...validateName('label1123', name, `${f}.name`));
      if (names.has(name))
        out.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: "${name}"`,
          field: `${f}.name`,
        });
      names.add(name);
    }
    if (typeof c.image !== 'string' || !c.image) out.push(required(`${f}.image`));
    const ports = Array.isArray(c.ports) ? c.ports : [];
    ports.forEach((p0, j) => {
      const p = asObject(p0) ?? {};
      const pf = `${f}.ports[${j}]`;
      if (!validPort(p.containerPort)) {
        out.push(
          invalidValue(`${pf}.containerPort`, p.containerPort ?? 0, 'must be between 1 and 65535, inclusive'),
        );
      }
      if (p.hostPort !== undefined && !validPort(p.hostPort)) {
        out.push(invalidValue(`${pf}.hostPort`, p.hostPort, 'must be between 1 and 65535, inclusive'));
      }
      if (p.protocol !== undefined && !PROTOCOLS.includes(String(p.protocol))) {
        out.push(notSupported(`${pf}.protocol`, p.protocol, PROTOCOLS));
      }
    });
  });
  return out;
}

function validateService(obj: JsonObject): StatusCause[] {
  const spec = asObject(obj.spec) ?? {};
  const out: StatusCause[] = [];
  const type = spec.type ?? 'ClusterIP';
  if (!SERVICE_TYPES.includes(String(type))) out.push(notSupported('spec.type', type, SERVICE_TYPES));
  const ports = Array.isArray(spec.ports) ? spec.ports : [];
  const headless = spec.clusterIP === 'None';
  if (ports.length === 0 && type !== 'ExternalName' && !headless) out.push(required('spec.ports'));
  const names = new Set<string>();
  ports.forEach((p0, i) => {
    const p = asObject(p0) ?? {};
    const f = `spec.ports[${i}]`;
    if (ports.length > 1 && (typeof p.name !== 'string' || !p.name)) out.push(required(`${f}.name`));
    if (typeof p.name === 'string' && p.name) {
      if (names.has(p.name))
        out.push({
          reason: 'FieldValueDuplicate',
          message: `Duplicate value: "${p.name}"`,
          field: `${f}.name`,
        });
      names.add(p.name);
    }
    if (!validPort(p.port))
      out.push(invalidValue(`${f}.port`, p.port ?? 0, 'must be between 1 and 65535, inclusive'));
    if (p.protocol !== undefined && !PROTOCOLS.includes(String(p.protocol))) {
      out.push(notSupported(`${f}.protocol`, p.protocol, PROTOCOLS));
    }
    if (typeof p.targetPort === 'number' && !validPort(p.targetPort)) {
      out.push(invalidValue(`${f}.targetPort`, p.targetPort, 'must be between 1 and 65535, inclusive'));
    }
  });
  if (type === 'ExternalName' && (typeof spec.externalName !== 'string' || !spec.externalName)) {
    out.push(required('spec.externalName'));
  }
  return out;
}

function validateIngress(obj: JsonObject): StatusCause[] {
  const spec = asObject(obj.spec) ?? {};
  const out: StatusCause[] = [];
  const rules = Array.isArray(spec.rules) ? spec.rules : [];
  if (rules.length === 0 && !spec.defaultBackend)
    out.push(required('spec.rules', 'either `defaultBackend` or `rules` must be specified'));
  rules.forEach((r0, i) => {
    const http = asObject(asObject(r0)?.http);
    const paths = Array.isArray(http?.paths) ? http.paths : [];
    paths.forEach((p0, j) => {
      const p = asObject(p0) ?? {};
      const f = `spec.rules[${i}].http.paths[${j}]`;
      const types = ['Exact', 'ImplementationSpecific', 'Prefix'];
      if (p.pathType === undefined) out.push(required(`${f}.pathType`, 'pathType must be specified'));
      else if (!types.includes(String(p.pathType)))
        out.push(notSupported(`${f}.pathType`, p.pathType, types));
      if (!asObject(p.backend)) out.push(required(`${f}.backend`));
    });
  });
  return out;
}

function validateIngressClass(obj: JsonObject): StatusCause[] {
  const spec = asObject(obj.spec) ?? {};
  return typeof spec.controller === 'string' && spec.controller ? [] : [required('spec.controller')];
}

function validateEndpointSlice(obj: JsonObject): StatusCause[] {
  const types = ['FQDN', 'IPv4', 'IPv6'];
  if (obj.addressType === undefined) return [required('addressType')];
  return types.includes(String(obj.addressType)) ? [] : [notSupported('addressType', obj.addressType, types)];
}

const BY_KIND: Record<string, (obj: JsonObject) => StatusCause[]> = {
  'v1/Pod': validatePod,
  'v1/Service': validateService,
  'networking.k8s.io/v1/Ingress': validateIngress,
  'networking.k8s.io/v1/IngressClass': validateIngressClass,
  'discovery.k8s.io/v1/EndpointSlice': validateEndpointSlice,
};

export function validateObject(t: ResourceType, obj: JsonObject): StatusCause[] {
  const key = `${t.group ? `${t.group}/` : ''}${t.version}/${t.kind}`;
  return [...validateMetadata(t, obj), ...(BY_KIND[key]?.(obj) ?? [])];
}

/**
 * A Service's status.loadBalancer as ValidateLoadBalancerStatus checks it (v1.35): ipMode is VIP
 * or Proxy and needs an ip; each port has a valid number and protocol, and an error, when given,
 * is a CamelCase reason, ours under a domain (`npl-lb.io/Invalid`).
 */
export function validateLoadBalancerStatus(status: JsonObject | undefined): StatusCause[] {
  const causes: StatusCause[] = [];
  const ingress = (status?.loadBalancer as JsonObject | undefined)?.ingress;
  if (!Array.isArray(ingress)) return causes;
  ingress.forEach((raw, i) => {
    const at = `status.loadBalancer.ingress[${i}]`;
    const e = (raw ?? {}) as JsonObject;
    if (e.ipMode !== undefined) {
      if (!e.ip) causes.push(forbidden(`${at}.ipMode`, 'may not be specified when `ip` is not set'));
      else if (e.ipMode !== 'VIP' && e.ipMode !== 'Proxy')
        causes.push(notSupported(`${at}.ipMode`, e.ipMode, ['Proxy', 'VIP']));
    }
    if (!Array.isArray(e.ports)) return;
    e.ports.forEach((rawPort, j) => {
      const pat = `${at}.ports[${j}]`;
      const p = (rawPort ?? {}) as JsonObject;
      if (typeof p.port !== 'number' || !Number.isInteger(p.port) || p.port < 1 || p.port > 65535)
        causes.push(invalidValue(`${pat}.port`, p.port, 'must be between 1 and 65535, inclusive'));
      if (p.protocol === undefined) causes.push(required(`${pat}.protocol`));
      else if (!['TCP', 'UDP', 'SCTP'].includes(String(p.protocol)))
        causes.push(notSupported(`${pat}.protocol`, p.protocol, ['SCTP', 'TCP', 'UDP']));
      if (p.error !== undefined) {
        const err = String(p.error);
        const [prefix, name] = err.includes('/')
          ? [err.slice(0, err.lastIndexOf('/')), err.slice(err.lastIndexOf('/') + 1)]
          : ['', err];
        const ok =
          err.length <= 316 &&
          /^[A-Z][A-Za-z0-9]*$/.test(name) &&
          (prefix === '' || (prefix.length <= 253 && SUBDOMAIN.test(prefix)));
        if (!ok) {
          causes.push(
            invalidValue(
              `${pat}.error`,
              p.error,
              "must be a CamelCase name, or a domain-prefixed one (e.g. 'example.com/CamelCase'), at most 316 characters",
            ),
          );
        }
      }
    });
  });
  return causes;
}
