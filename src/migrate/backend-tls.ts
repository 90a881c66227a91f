/**
 * Re-encryption as another controller's objects ask it (a vendor's migration reads them) as npl-lb objects: per target Service a BackendTLSPolicy, its CA in a ConfigMap
 * (`ca.crt`) when the source gives one, else the system's CAs. npl-lb always verifies the
 * certificate against the policy's hostname, which the sources do not name: it is set to the
 * Service's cluster DNS name and said, to be checked against the Pods' certificates.
 */
import { GATEWAY_GROUP } from '../kube/gateway-objects.ts';
import { caBundle } from '../source/gateway/backend-tls.ts';
import { nameOf, type ObjectsMigration, SERVICE_NAME, type TargetService } from './objects.ts';

export function reencryptObjects(
  from: string,
  name: string,
  target: TargetService,
  caText: string | undefined,
  out: ObjectsMigration,
): void {
  if (!SERVICE_NAME.test(target.service) || !SERVICE_NAME.test(target.namespace)) {
    out.notes.push({
      from,
      kind: 'by hand',
      why: `${JSON.stringify(`${target.namespace}/${target.service}`.slice(0, 120))} is not a Service's namespace and name; write the BackendTLSPolicy by hand`,
    });
    return;
  }
  const bundle = caText === undefined ? undefined : caBundle(caText);
  if (bundle && 'problem' in bundle) {
    out.notes.push({
      from,
      kind: 'by hand',
      why: `its CA cannot be used (${bundle.problem}); write the BackendTLSPolicy and its CA ConfigMap by hand (docs/tls.md)`,
    });
    return;
  }
  const policy = nameOf(name);
  const cm = nameOf(name, 'ca');
  if (bundle)
    out.objects.push({
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: cm, namespace: target.namespace },
      data: { 'ca.crt': bundle.pem },
    });
  const hostname = `${target.service}.${target.namespace}.svc.cluster.local`;
  out.objects.push({
    apiVersion: `${GATEWAY_GROUP}/v1`,
    kind: 'BackendTLSPolicy',
    metadata: { name: policy, namespace: target.namespace },
    spec: {
      targetRefs: [
        {
          group: '',
          kind: 'Service',
          name: target.service,
          ...(target.port ? { sectionName: target.port } : {}),
        },
      ],
      validation: {
        hostname,
        ...(bundle
          ? { caCertificateRefs: [{ group: '', kind: 'ConfigMap', name: cm }] }
          : { wellKnownCACertificates: 'System' }),
      },
    },
  });
  out.notes.push({
    from,
    kind: 'changed',
    why: `re-encryption is BackendTLSPolicy ${target.namespace}/${policy}, which verifies the Pods' certificate against its hostname (set to ${hostname}: check it is a name their certificate carries)${bundle ? '' : ' and the system CAs (no CA was given: give the one that signs the Pods’ certificates in a ConfigMap)'}`,
  });
}
