/**
 * A Gateway's client certificate validation (`spec.tls.frontend`) for one HTTPS listener: its
 * port's `perPort` entry, else the `default`; each CA reference resolved as the spec orders it (a
 * ConfigMap's `ca.crt`, one in another namespace through a ReferenceGrant), the bundle parsed and
 * written again (caBundle), and the listener's conditions when a reference does not resolve. Pure.
 */
import { GATEWAY_GROUP, type Gateway, type ReferenceGrant } from '../../kube/gateway-objects.ts';
import { CA_KEY, type CaConfigMap } from '../../kube/config-maps.ts';
import type { ClientValidation } from '../../model/types.ts';
import { caBundle } from './backend-tls.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import { referencePermitted } from './reference-grants.ts';
import { headerNameProblem } from '../validate.ts';

export type ConfigMapLookup = (namespace: string, name: string) => CaConfigMap | undefined;

/** One validation block of `spec.tls.frontend` (the CRD's FrontendTLSValidation). */
export interface FrontendValidationSpec {
  caCertificateRefs: { group: string; kind: string; name: string; namespace?: string | undefined }[];
  mode: string;
}

/** The Gateway annotation naming the header a verified client's subject is sent to members in. */
export const CLIENT_SUBJECT_HEADER = 'npl-lb.io/client-certificate-header';

export const ALLOW_VALID_ONLY = 'AllowValidOnly';
export const ALLOW_INSECURE_FALLBACK = 'AllowInsecureFallback';

/** The validation asked for a port, and the field it comes from (for messages), or none. */
export function validationFor(
  gw: Gateway,
  port: number,
): { spec: FrontendValidationSpec; field: string } | undefined {
  const frontend = gw.spec.tls?.frontend;
  if (!frontend) return undefined;
  const i = (frontend.perPort ?? []).findIndex((p) => p.port === port);
  const perPort = i >= 0 ? frontend.perPort![i]!.tls.validation : undefined;
  if (perPort) return { spec: perPort, field: `spec.tls.frontend.perPort[${i}].tls.validation` };
  const dflt = frontend.default?.validation;
  return dflt ? { spec: dflt, field: 'spec.tls.frontend.default.validation' } : undefined;
}

/**
 * The header a verified client's subject goes to members in (the Gateway's annotation), or why it
 * cannot be used: not an HTTP token, or a device that does not send it. None when not annotated.
 */
function subjectHeaderOf(
  gw: Gateway,
  ctx: { subjectHeader?: boolean; adapter?: string },
): { name: string } | { problem: string } | undefined {
  const name = gw.metadata.annotations?.[CLIENT_SUBJECT_HEADER];
  if (name === undefined) return undefined;
  const at = `metadata.annotations[${JSON.stringify(CLIENT_SUBJECT_HEADER)}]`;
  const bad = headerNameProblem(name);
  if (bad) return { problem: `${at}: ${bad}` };
  if (!ctx.subjectHeader)
    return {
      problem: `${at}: the ${ctx.adapter ?? 'configured'} load balancer does not send a client's subject to members; the listener is not served rather than served without it`,
    };
  return { name };
}

/** Whether any validation of the Gateway falls back to serving unverified clients. */
export const insecureFallbackAsked = (gw: Gateway): boolean => {
  const f = gw.spec.tls?.frontend;
  return [f?.default?.validation, ...(f?.perPort ?? []).map((p) => p.tls.validation)].some(
    (v) => v?.mode === ALLOW_INSECURE_FALLBACK,
  );
};

export interface FrontendTls {
  /** What the port's virtual service asks of clients; absent when nothing resolved or none asked. */
  validation?: ClientValidation;
  /** ResolvedRefs False when a reference does not resolve. */
  resolvedRefs?: ConditionSpec;
  /** Accepted False: no reference resolved, or the mode is not one npl-lb knows. */
  accepted?: ConditionSpec;
}

/** One CA reference of a validation: its bundle, or the spec's reason it cannot be used. */
function caOfRef(
  r: FrontendValidationSpec['caCertificateRefs'][number],
  at: string,
  ns: string,
  ctx: { configMap: ConfigMapLookup; grants: readonly ReferenceGrant[] },
): { pem: string } | { reason: string; message: string } {
  if (r.group !== '' || r.kind !== 'ConfigMap')
    return {
      reason: 'InvalidCACertificateKind',
      message: `${at}: ${r.group || 'core'}/${r.kind} is not a ConfigMap`,
    };
  const target = r.namespace ?? ns;
  const from = { group: GATEWAY_GROUP, kind: 'Gateway', namespace: ns };
  const name = `ConfigMap ${target}/${r.name}`;
  if (
    !referencePermitted(ctx.grants, from, { group: '', kind: 'ConfigMap', namespace: target, name: r.name })
  )
    return {
      reason: 'RefNotPermitted',
      message: `${at}: ${name} is in another namespace and no ReferenceGrant allows it`,
    };
  const cm = ctx.configMap(target, r.name);
  if (!cm) return { reason: 'InvalidCACertificateRef', message: `${at}: ${name} not found` };
  if (cm.caCrt === undefined)
    return { reason: 'InvalidCACertificateRef', message: `${at}: ${name} has no key ${CA_KEY}` };
  const bundle = caBundle(cm.caCrt);
  return 'problem' in bundle
    ? { reason: 'InvalidCACertificateRef', message: `${at}: ${name}: ${bundle.problem}` }
    : bundle;
}

/**
 * The client validation of an HTTPS listener on `port` of `gw`: the CAs that resolve (joined), and
 * the conditions for those that do not. A listener none of whose CAs resolves is not accepted
 * (NoValidCACertificate): it is never served to clients unchecked.
 */
export function resolveFrontendTls(
  gw: Gateway,
  port: number,
  ctx: {
    configMap: ConfigMapLookup;
    grants: readonly ReferenceGrant[];
    /** Whether the device sends a verified client's subject in a header; its name for messages. */
    subjectHeader?: boolean;
    adapter?: string;
  },
): FrontendTls {
  const asked = validationFor(gw, port);
  if (!asked) return {};
  const { spec, field } = asked;
  const header = subjectHeaderOf(gw, ctx);
  if (header && 'problem' in header)
    return { accepted: cond('Accepted', false, 'UnsupportedValue', header.problem) };
  if (spec.mode !== ALLOW_VALID_ONLY && spec.mode !== ALLOW_INSECURE_FALLBACK)
    return {
      accepted: cond(
        'Accepted',
        false,
        'UnsupportedValue',
        `${field}.mode: ${JSON.stringify(spec.mode.slice(0, 64))} is not AllowValidOnly or AllowInsecureFallback`,
      ),
    };
  const refs = spec.caCertificateRefs.map((r, i) =>
    caOfRef(r, `${field}.caCertificateRefs[${i}]`, gw.metadata.namespace, ctx),
  );
  const good = refs.flatMap((r) => ('pem' in r ? [r.pem] : []));
  const bad = refs.flatMap((r) => ('reason' in r ? [r] : []));
  const resolvedRefs =
    bad.length > 0
      ? cond('ResolvedRefs', false, bad[0]!.reason, bad.map((b) => b.message).join('; '))
      : undefined;
  if (good.length === 0)
    return {
      accepted: cond(
        'Accepted',
        false,
        'NoValidCACertificate',
        `${field}: no CA certificate reference is valid; the listener is not served rather than served to clients unchecked`,
      ),
      ...(resolvedRefs ? { resolvedRefs } : {}),
    };
  return {
    validation: {
      ca: good.join(''),
      insecureFallback: spec.mode === ALLOW_INSECURE_FALLBACK,
      ...(header ? { subjectHeader: header.name } : {}),
    },
    ...(resolvedRefs ? { resolvedRefs } : {}),
  };
}
