/**
 * A Gateway's `spec.tls.backend.clientCertificateRef` (v1.6, GatewayBackendClientCertificate): the
 * certificate the load balancer presents to members it speaks TLS to (a BackendTLSPolicy's), judged
 * as the spec orders: a core Secret of type kubernetes.io/tls, one in another namespace only through
 * a ReferenceGrant to the Gateway. Said on the Gateway's `ResolvedRefs` condition
 * (`InvalidClientCertificateRef`, `RefNotPermitted`); the Gateway stays accepted, and its TLS pools
 * present no certificate while the reference does not resolve. Pure.
 */
import { GATEWAY_GROUP, type Gateway, type ReferenceGrant } from '../../kube/gateway-objects.ts';
import { certificateName } from '../../model/names.ts';
import type { Certificate } from '../../model/types.ts';
import type { SecretCertificates } from '../ingress/tls.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import { referencePermitted } from './reference-grants.ts';

export interface BackendClientCertificate {
  resolvedRefs: ConditionSpec;
  /** The certificate to present, named as the model names a Secret's (shared with listeners). */
  certificate?: Certificate;
}

const FIELD = 'spec.tls.backend.clientCertificateRef';

/** The Gateway's backend client certificate, or undefined where it names none. */
export function backendClientCertificate(
  gw: Gateway,
  ctx: { cluster: string; grants: readonly ReferenceGrant[]; certificateOf: SecretCertificates },
): BackendClientCertificate | undefined {
  const ref = gw.spec.tls?.backend?.clientCertificateRef;
  if (!ref) return undefined;
  const refused = (reason: string, why: string) => ({
    resolvedRefs: cond('ResolvedRefs', false, reason, `${FIELD}: ${why}`),
  });
  if (ref.group !== '' || ref.kind !== 'Secret')
    return refused(
      'InvalidClientCertificateRef',
      `${JSON.stringify(`${ref.group}/${ref.kind}`.slice(0, 96))} is not a core Secret`,
    );
  const ns = gw.metadata.namespace;
  const target = ref.namespace ?? ns;
  const to = { group: '', kind: 'Secret', namespace: target, name: ref.name };
  if (!referencePermitted(ctx.grants, { group: GATEWAY_GROUP, kind: 'Gateway', namespace: ns }, to))
    return refused(
      'RefNotPermitted',
      `Secret ${target}/${ref.name} is in another namespace and no ReferenceGrant allows it`,
    );
  const res = ctx.certificateOf(`${target}/${ref.name}`);
  if (!res || 'problem' in res)
    return refused(
      'InvalidClientCertificateRef',
      res?.problem ?? `Secret ${target}/${ref.name} not found (or not of type kubernetes.io/tls)`,
    );
  return {
    resolvedRefs: cond('ResolvedRefs', true, 'ResolvedRefs'),
    certificate: { ...res.certificate, name: certificateName(ctx.cluster, target, ref.name) },
  };
}
