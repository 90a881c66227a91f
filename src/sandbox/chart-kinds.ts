/**
 * Defaults and validation of the kinds the Helm chart renders (stored, not run), after the real
 * strategies: Secret `stringData` folded into base64 `data` and type Opaque; ConfigMap and Secret
 * keys; Deployment and DaemonSet selectors that must match the template and cannot change;
 * PodDisruptionBudgets with one of minAvailable and maxUnavailable; RBAC rules and an immutable
 * roleRef.
 */
import { isDeepStrictEqual } from 'node:util';
import type { ResourceType } from './kinds.ts';
import type { JsonObject } from './openapi.ts';
import type { StatusCause } from './status.ts';
import { required } from './validate.ts';

const CONFIG_KEY = /^[-._a-zA-Z0-9]+$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

const obj = (v: unknown): JsonObject | undefined =>
  v && typeof v === 'object' && !Array.isArray(v) ? (v as JsonObject) : undefined;
const invalid = (field: string, value: unknown, detail: string): StatusCause => ({
  reason: 'FieldValueInvalid',
  message: `Invalid value: ${JSON.stringify(value)}: ${detail}`,
  field,
});
const kindKey = (t: ResourceType) => `${t.group ? `${t.group}/` : ''}${t.kind}`;

export function chartDefaults(t: ResourceType, o: JsonObject): void {
  const k = kindKey(t);
  if (k === 'Secret') {
    o.type ??= 'Opaque';
    const stringData = obj(o.stringData);
    if (stringData) {
      const data = { ...(obj(o.data) ?? {}) };
      for (const [key, v] of Object.entries(stringData))
        data[key] = Buffer.from(String(v), 'utf8').toString('base64');
      o.data = data;
      delete o.stringData;
    }
  }
  if (k === 'apps/Deployment') {
    const spec = obj(o.spec);
    if (spec) spec.replicas ??= 1;
  }
}

function keys(field: string, data: unknown, base64: boolean): StatusCause[] {
  const out: StatusCause[] = [];
  for (const [key, v] of Object.entries(obj(data) ?? {})) {
    if (!CONFIG_KEY.test(key)) {
      out.push(
        invalid(
          `${field}[${key}]`,
          key,
          "a valid config key must consist of alphanumeric characters, '-', '_' or '.'",
        ),
      );
    }
    if (base64 && (typeof v !== 'string' || !BASE64.test(v)))
      out.push(invalid(`${field}[${key}]`, '<value>', 'illegal base64 data'));
  }
  return out;
}

function selectorMatchesTemplate(o: JsonObject): StatusCause[] {
  const spec = obj(o.spec) ?? {};
  const selector = obj(spec.selector);
  if (!selector) return [required('spec.selector')];
  const labels = obj(obj(obj(spec.template)?.metadata)?.labels) ?? {};
  const match = obj(selector.matchLabels) ?? {};
  if (Object.keys(match).length === 0 && !Array.isArray(selector.matchExpressions)) {
    return [invalid('spec.selector', selector, 'empty selector is invalid for deployment')];
  }
  const ok = Object.entries(match).every(([k, v]) => labels[k] === v);
  return ok
    ? []
    : [invalid('spec.template.metadata.labels', labels, '`selector` does not match template `labels`')];
}

function rules(field: string, list: unknown): StatusCause[] {
  const out: StatusCause[] = [];
  (Array.isArray(list) ? list : []).forEach((r, i) => {
    const rule = obj(r) ?? {};
    if (!Array.isArray(rule.verbs) || rule.verbs.length === 0)
      out.push(required(`${field}[${i}].verbs`, 'verbs must contain at least one value'));
    if (
      !Array.isArray(rule.nonResourceURLs) &&
      (!Array.isArray(rule.apiGroups) || rule.apiGroups.length === 0)
    ) {
      out.push(required(`${field}[${i}].apiGroups`, 'resource rules must supply at least one api group'));
    }
  });
  return out;
}

export function validateChartKind(
  t: ResourceType,
  o: JsonObject,
  old: JsonObject | undefined,
): StatusCause[] {
  const k = kindKey(t);
  const spec = obj(o.spec) ?? {};
  switch (k) {
    case 'ConfigMap':
      return [...keys('data', o.data, false), ...keys('binaryData', o.binaryData, true)];
    case 'Secret': {
      const out = keys('data', o.data, true);
      if (old && old.type !== o.type) out.push(invalid('type', o.type, 'field is immutable'));
      return out;
    }
    case 'apps/Deployment':
    case 'apps/DaemonSet': {
      const out = selectorMatchesTemplate(o);
      if (old && !isDeepStrictEqual(obj(old.spec)?.selector, spec.selector)) {
        out.push(invalid('spec.selector', spec.selector, 'field is immutable'));
      }
      return out;
    }
    case 'policy/PodDisruptionBudget':
      return spec.minAvailable !== undefined && spec.maxUnavailable !== undefined
        ? [invalid('spec', spec, 'minAvailable and maxUnavailable cannot be both set')]
        : [];
    case 'rbac.authorization.k8s.io/Role':
    case 'rbac.authorization.k8s.io/ClusterRole':
      return rules('rules', o.rules);
    case 'rbac.authorization.k8s.io/RoleBinding':
    case 'rbac.authorization.k8s.io/ClusterRoleBinding': {
      const out: StatusCause[] = [];
      if (!obj(o.roleRef)) out.push(required('roleRef'));
      if (old && !isDeepStrictEqual(old.roleRef, o.roleRef))
        out.push(invalid('roleRef', o.roleRef, 'cannot change roleRef'));
      return out;
    }
    default:
      return [];
  }
}
