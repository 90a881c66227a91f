/**
 * A VirtualServer's TLSProfile (CIS's `tlsProfileName`) on the Ingress it becomes. The client
 * side's certificates, Secrets of the virtual server's namespace, go in the Ingress's `spec.tls`
 * for its hosts; `termination: reencrypt` becomes the Ingress's re-encryption annotations
 * (docs/tls.md): the name sent and verified is the virtual server's host, and the CA a ConfigMap
 * made by hand from where CIS kept what it trusted (a Secret's `tls.crt` or a BIG-IP profile); the
 * Ingress's rules are not served until it is there. What cannot be carried (a certificate in a
 * BIG-IP profile, passthrough, a termination or reference CIS does not take, a TLSProfile not
 * given) leaves the Ingress out with a note: never served in clear text where CIS served TLS. Pure.
 */
import { z } from 'zod';
import {
  BACKEND_CA_ANNOTATION,
  BACKEND_PROTOCOL_ANNOTATION,
  BACKEND_SERVER_NAME_ANNOTATION,
  badIdentity,
  nameOf,
  OBJECT_NAME,
  type ObjectsMigration,
  objectName,
  type SourceObject,
} from '../../../src/migrate/objects.ts';

const names = z.array(z.string()).catch([]);
const params = z
  .looseObject({ profileReference: z.string().optional().catch(undefined) })
  .optional()
  .catch(undefined);
const tlsSchema = z
  .looseObject({
    termination: z.string().optional().catch(undefined),
    reference: z.string().optional().catch(undefined),
    clientSSL: z.string().optional().catch(undefined),
    clientSSLs: names,
    serverSSL: z.string().optional().catch(undefined),
    serverSSLs: names,
    clientSSLParams: params,
    serverSSLParams: params,
  })
  .catch({ clientSSLs: [], serverSSLs: [] });

/** The fields of a TLSProfile's `tls` read here; any other is noted. */
const TLS_READ = new Set(Object.keys(tlsSchema.unwrap().shape));

/** What the Ingress a VirtualServer becomes takes from its TLSProfile. */
export interface IngressTls {
  tls: { hosts: string[]; secretName: string }[];
  annotations: Record<string, string>;
}

const show = (v: string) => JSON.stringify(v.slice(0, 80));

/** Where CIS takes a side's profiles from: Kubernetes Secrets or BIG-IP profiles by name. */
function sideReference(
  tls: z.infer<typeof tlsSchema>,
  side: 'clientSSLParams' | 'serverSSLParams',
): 'secret' | 'bigip' | undefined {
  const r = tls.reference === 'hybrid' ? tls[side]?.profileReference : tls.reference;
  if (r === 'secret' || r === 'secrets') return 'secret';
  if (r === 'bigip') return 'bigip';
  return undefined;
}

/** The TLSProfiles given (those Kubernetes could hold), by namespace and name. */
export function tlsProfiles(objects: readonly SourceObject[]): Map<string, SourceObject> {
  const m = new Map<string, SourceObject>();
  for (const o of objects)
    if (o.kind === 'TLSProfile' && !badIdentity(o)) m.set(`${o.metadata.namespace}/${o.metadata.name}`, o);
  return m;
}

/**
 * The Ingress's TLS from the VirtualServer's TLSProfile: undefined when it names none (clear
 * text, as CIS served it), 'left out' when it cannot be carried (said in the notes).
 */
export function ingressTls(
  vs: SourceObject,
  hosts: readonly string[],
  firstService: string | undefined,
  profiles: ReadonlyMap<string, SourceObject>,
  out: ObjectsMigration,
): IngressTls | 'left out' | undefined {
  const ref = vs.spec.tlsProfileName;
  if (ref === undefined || ref === null || ref === '') return undefined;
  const from = `${objectName(vs)} tlsProfileName`;
  const leaveOut = (why: string): 'left out' => {
    out.notes.push({ from, kind: 'by hand', why: `${why}; the Ingress is left out until then` });
    return 'left out';
  };
  const profile = typeof ref === 'string' ? profiles.get(`${vs.metadata.namespace}/${ref}`) : undefined;
  if (!profile)
    return leaveOut(
      `TLSProfile ${show(String(ref))} was not given (kubectl get tlsprofiles -A -o yaml, with -f)`,
    );
  const tls = tlsSchema.parse(profile.spec.tls);
  const name = objectName(profile);
  for (const k of Object.keys(z.record(z.string(), z.unknown()).catch({}).parse(profile.spec.tls)))
    if (!TLS_READ.has(k))
      out.notes.push({
        from: `${name} tls.${k}`,
        kind: 'no equivalent',
        why: 'a BIG-IP SSL profile setting (ciphers, renegotiation, versions): npl-lb does not write it',
      });
  if (tls.termination === 'passthrough')
    return leaveOut(
      `${name} passes TLS through: a Gateway listener of protocol TLS in Passthrough mode and a TLSRoute for the hosts (docs/gateway-api.md)`,
    );
  if (tls.termination !== 'edge' && tls.termination !== 'reencrypt')
    return leaveOut(
      `${name} termination ${show(tls.termination ?? '')} is not edge, reencrypt or passthrough`,
    );
  if (hosts.length === 0)
    return leaveOut(`${name}: the virtual server has no host the Ingress's spec.tls can name`);
  const client = [...(tls.clientSSL ? [tls.clientSSL] : []), ...tls.clientSSLs];
  const clientRef = sideReference(tls, 'clientSSLParams');
  if (clientRef === undefined)
    return leaveOut(`${name} reference ${show(tls.reference ?? '')} is not secret, bigip or hybrid`);
  if (clientRef === 'bigip' || client.length === 0)
    return leaveOut(
      `${name}: the certificate is ${client.length > 0 ? `BIG-IP profile ${client.map(show).join(', ')}` : 'not named'}: put it in a Secret of type kubernetes.io/tls in ${vs.metadata.namespace} and name it in the Ingress's spec.tls`,
    );
  const bad = client.find((s) => !OBJECT_NAME.test(s));
  if (bad !== undefined) return leaveOut(`${name} clientSSL ${show(bad)} is not a Secret's name`);
  const tlsOut = client.map((secretName) => ({ hosts: [...hosts], secretName }));
  if (tls.termination === 'edge') return { tls: tlsOut, annotations: {} };
  return { tls: tlsOut, annotations: reencryptAnnotations(vs, name, tls, hosts[0]!, firstService, out) };
}

/**
 * `termination: reencrypt` as the Ingress's re-encryption annotations, and the note saying how to
 * make the CA's ConfigMap from where CIS kept what it trusted. The name verified is the virtual
 * server's host, which the Pods' certificates were made for most often.
 */
function reencryptAnnotations(
  vs: SourceObject,
  name: string,
  tls: z.infer<typeof tlsSchema>,
  serverName: string,
  firstService: string | undefined,
  out: ObjectsMigration,
): Record<string, string> {
  const configMap = nameOf(vs.metadata.name, 'ca');
  const server = [...(tls.serverSSL ? [tls.serverSSL] : []), ...tls.serverSSLs];
  const serverRef = sideReference(tls, 'serverSSLParams');
  const ns = vs.metadata.namespace;
  const secret = server.find((s) => OBJECT_NAME.test(s));
  const source =
    serverRef === 'secret' && secret !== undefined
      ? `CIS's serverSSL is Secret ${ns}/${secret}: where its tls.crt is the CA that signs the Pods' certificates, kubectl -n ${ns} get secret ${secret} -o jsonpath='{.data.tls\\.crt}' | base64 -d > ca.crt && kubectl -n ${ns} create configmap ${configMap} --from-file=ca.crt (else put that CA in the ConfigMap, key ca.crt)`
      : serverRef === 'bigip' && server.length > 0
        ? `the CA is in BIG-IP server SSL profile ${server.map(show).join(', ')}: put it in ConfigMap ${ns}/${configMap} (key ca.crt)`
        : `put the CA that signs the Pods' certificates in ConfigMap ${ns}/${configMap} (key ca.crt)`;
  out.notes.push({
    from: `${name} termination reencrypt`,
    kind: 'by hand',
    why: `re-encrypted by the Ingress's annotations, verifying the Pods' certificates against ${serverName}${firstService ? ` (or set ${BACKEND_SERVER_NAME_ANNOTATION} to a name they carry, such as ${firstService}.${ns}.svc.cluster.local)` : ''}; ${source}; until the ConfigMap is there the Ingress's rules are not served`,
  });
  return {
    [BACKEND_PROTOCOL_ANNOTATION]: 'HTTPS',
    [BACKEND_SERVER_NAME_ANNOTATION]: serverName,
    [BACKEND_CA_ANNOTATION]: configMap,
  };
}
