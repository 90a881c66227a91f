/**
 * BackendTLSPolicy (gateway.networking.k8s.io/v1, GEP-1897): the Service ports a policy targets
 * are spoken to over TLS, the policy's hostname sent as SNI and verified (or its subjectAltNames),
 * against the CA bundles of its ConfigMaps (`ca.crt`) or the device's public CAs (`System`).
 *
 * Never clear text, never unverified: a port whose policy cannot be used (a CA reference that does
 * not resolve, a field the load balancer cannot verify, a load balancer that speaks no TLS to
 * members) is a backendRef that does not resolve (its share answers 500), and the policy says why
 * in its ancestors' status (each Gateway of a route that sends there): Accepted and ResolvedRefs
 * with the spec's reasons (NoValidCACertificate, InvalidCACertificateRef, InvalidKind, Invalid,
 * Conflicted). Of two policies on one target (a port by its `sectionName`, or the whole
 * Service), the older one applies (GEP-713); a policy naming the port wins over one naming the
 * Service. Every value is checked here: the hostname and names are DNS names, each CA bundle
 * parses as X.509 certificates and is written again from them (nothing else of the ConfigMap's
 * text reaches a device). Pure.
 */
import { X509Certificate } from 'node:crypto';
import type { BackendTlsCapabilities } from '../../adapter/contract.ts';
import type { BackendTlsPolicy } from '../../kube/backend-tls-objects.ts';
import { CA_KEY, type CaConfigMap } from '../../kube/config-maps.ts';
import { GATEWAY_GROUP } from '../../kube/gateway-objects.ts';
import { type BackendTls, SYSTEM_CA } from '../../model/types.ts';
import { cond, type ConditionSpec } from './conditions.ts';

export interface TlsPolicyAncestor {
  ancestorRef: { group: string; kind: 'Gateway'; namespace: string; name: string };
  conditions: ConditionSpec[];
}

/** What applies to one Service port: the policies over it (the first applies), and its TLS or why not. */
export interface TlsTarget {
  /** namespace/name of each policy over the port, the one that applies first. */
  policies: string[];
  /** The TLS the pool speaks; absent when the policy cannot be used (`problem`). */
  tls?: BackendTls;
  problem?: string;
}

/** A CA bundle's size past which it is refused (a real bundle of public CAs is about 220 KiB). */
export const MAX_CA_BYTES = 256 * 1024;
/** Certificates one bundle may hold. */
export const MAX_CA_CERTIFICATES = 200;

const key = (m: { namespace: string; name: string }): string => `${m.namespace}/${m.name}`;

/** A DNS name as the Gateway API's PreciseHostname reads it (lower case, no wildcard). */
export const DNS_NAME =
  /^(?=.{1,253}$)[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?(\.[a-z0-9]([-a-z0-9]{0,61}[a-z0-9])?)*$/;

const PEM_BLOCK = /-----BEGIN CERTIFICATE-----\r?\n[A-Za-z0-9+/=\r\n]+?-----END CERTIFICATE-----/g;

/**
 * A ConfigMap's `ca.crt` as the certificates it holds, each written again from its parse (so no
 * text of the ConfigMap's own reaches a device), or why it cannot be used.
 */
export function caBundle(text: string): { pem: string } | { problem: string } {
  if (Buffer.byteLength(text) > MAX_CA_BYTES)
    return { problem: `${CA_KEY} is ${Buffer.byteLength(text)} bytes, over the ${MAX_CA_BYTES} allowed` };
  const blocks = text.match(PEM_BLOCK) ?? [];
  if (blocks.length === 0) return { problem: `${CA_KEY} holds no PEM certificate` };
  if (blocks.length > MAX_CA_CERTIFICATES)
    return {
      problem: `${CA_KEY} holds ${blocks.length} certificates, over the ${MAX_CA_CERTIFICATES} allowed`,
    };
  const out: string[] = [];
  for (const [i, b] of blocks.entries()) {
    try {
      out.push(new X509Certificate(b).toString().trim());
    } catch (err) {
      return { problem: `${CA_KEY}: certificate ${i + 1} does not parse (${(err as Error).message})` };
    }
  }
  return { pem: `${out.join('\n')}\n` };
}

/** One policy judged alone: the TLS it asks for, or its conditions saying why not. */
interface Judged {
  tls?: BackendTls;
  accepted: ConditionSpec;
  resolvedRefs?: ConditionSpec;
}

const invalid = (message: string): Judged => ({ accepted: cond('Accepted', false, 'Invalid', message) });

/** The names a member's certificate is verified against: its subjectAltNames, else its hostname. */
function verifyNames(
  v: BackendTlsPolicy['spec']['validation'],
  can: BackendTlsCapabilities,
  adapter: string,
): string[] | string {
  const names: string[] = [];
  for (const [i, s] of v.subjectAltNames.entries()) {
    const at = `spec.validation.subjectAltNames[${i}]`;
    if (s.type === 'URI') return `${at}: a URI name is not verified by the ${adapter} load balancer`;
    if (s.type !== 'Hostname') return `${at}.type: ${JSON.stringify(s.type)} is not Hostname or URI`;
    if (!DNS_NAME.test(s.hostname ?? ''))
      return `${at}.hostname: ${JSON.stringify(s.hostname)} is not a DNS name`;
    names.push(s.hostname!);
  }
  if (names.length === 0) names.push(v.hostname);
  if (names.length > can.maxVerifyNames)
    return `spec.validation.subjectAltNames: the ${adapter} load balancer verifies one of at most ${can.maxVerifyNames} names, not ${names.length}`;
  if (!can.namesApartFromSni && names.some((n) => n !== v.hostname))
    return `spec.validation.subjectAltNames: the ${adapter} load balancer verifies the certificate against the name it sends (the hostname, ${v.hostname}) and cannot verify another`;
  return names;
}

/** The CA of a policy: the bundles of its ConfigMaps joined, or the system's, or its conditions. */
function caOf(
  p: BackendTlsPolicy,
  configMap: (namespace: string, name: string) => CaConfigMap | undefined,
  can: BackendTlsCapabilities,
  adapter: string,
): { ca: string; resolvedRefs: ConditionSpec } | Judged {
  const v = p.spec.validation;
  const wellKnown = v.wellKnownCACertificates ?? '';
  if (wellKnown !== '' && v.caCertificateRefs.length > 0)
    return invalid('spec.validation: caCertificateRefs and wellKnownCACertificates are both given');
  if (wellKnown !== '') {
    if (wellKnown !== SYSTEM_CA || !can.systemCa)
      return invalid(
        `spec.validation.wellKnownCACertificates: ${JSON.stringify(wellKnown)} is not supported by the ${adapter} load balancer${can.systemCa ? ' (System is)' : ''}`,
      );
    return { ca: SYSTEM_CA, resolvedRefs: cond('ResolvedRefs', true, 'ResolvedRefs', 'the system CAs') };
  }
  if (v.caCertificateRefs.length === 0)
    return invalid('spec.validation: neither caCertificateRefs nor wellKnownCACertificates is given');
  const good: string[] = [];
  const bad: { reason: string; message: string }[] = [];
  for (const [i, r] of v.caCertificateRefs.entries()) {
    const at = `spec.validation.caCertificateRefs[${i}]`;
    if (r.group !== '' || r.kind !== 'ConfigMap') {
      bad.push({
        reason: 'InvalidKind',
        message: `${at}: ${r.group || 'core'}/${r.kind} is not a ConfigMap`,
      });
      continue;
    }
    const cm = configMap(p.metadata.namespace, r.name);
    const text = cm?.caCrt;
    const bundle = text === undefined ? undefined : caBundle(text);
    if (!cm) bad.push({ reason: 'InvalidCACertificateRef', message: `${at}: ConfigMap ${r.name} not found` });
    else if (!bundle)
      bad.push({
        reason: 'InvalidCACertificateRef',
        message: `${at}: ConfigMap ${r.name} has no key ${CA_KEY}`,
      });
    else if ('problem' in bundle)
      bad.push({
        reason: 'InvalidCACertificateRef',
        message: `${at}: ConfigMap ${r.name}: ${bundle.problem}`,
      });
    else good.push(bundle.pem);
  }
  const resolvedRefs =
    bad.length === 0
      ? cond('ResolvedRefs', true, 'ResolvedRefs', 'every CA certificate reference resolved')
      : cond('ResolvedRefs', false, bad[0]!.reason, bad.map((b) => b.message).join('; '));
  if (good.length === 0)
    return {
      accepted: cond('Accepted', false, 'NoValidCACertificate', 'no CA certificate reference is valid'),
      resolvedRefs,
    };
  return { ca: good.join(''), resolvedRefs };
}

/** One policy judged on its own (its targets' precedence is decided apart). */
function judge(
  p: BackendTlsPolicy,
  configMap: (namespace: string, name: string) => CaConfigMap | undefined,
  can: BackendTlsCapabilities | undefined,
  adapter: string,
): Judged {
  if (!can)
    return invalid(
      `the ${adapter} load balancer does not speak TLS to backends: requests for the Services this policy targets answer 500, never in clear text`,
    );
  const v = p.spec.validation;
  if (!DNS_NAME.test(v.hostname))
    return invalid(`spec.validation.hostname: ${JSON.stringify(v.hostname)} is not a DNS name`);
  const options = Object.keys(p.spec.options ?? {});
  if (options.length > 0)
    return invalid(`spec.options: ${options.map((o) => JSON.stringify(o)).join(', ')} not supported`);
  const names = verifyNames(v, can, adapter);
  if (typeof names === 'string') return invalid(names);
  const ca = caOf(p, configMap, can, adapter);
  if (!('ca' in ca)) return ca;
  return {
    tls: { serverName: v.hostname, verifyNames: names, ca: ca.ca },
    accepted: cond('Accepted', true, 'Accepted', 'the policy applies'),
    resolvedRefs: ca.resolvedRefs,
  };
}

export interface BackendTlsResolution {
  /** What applies to a Service port (its name; '' for an unnamed port), or nothing. */
  of(namespace: string, service: string, portName: string): TlsTarget | undefined;
  /** The ancestors' status of each policy a route hit (`hits`: policy -> Gateways). */
  statuses(hits: ReadonlyMap<string, ReadonlySet<string>>): Map<string, TlsPolicyAncestor[]>;
}

/** Every policy judged, and their targets by precedence (the oldest first, then by name). */
export function resolveBackendTls(
  policies: readonly BackendTlsPolicy[],
  configMaps: readonly CaConfigMap[],
  can: BackendTlsCapabilities | undefined,
  adapter: string,
): BackendTlsResolution {
  if (policies.length === 0) return { of: () => undefined, statuses: () => new Map() };
  const cms = new Map(configMaps.map((c) => [key(c.metadata), c]));
  const configMap = (ns: string, name: string) => cms.get(`${ns}/${name}`);
  const ordered = [...policies].sort(
    (a, b) =>
      (a.metadata.creationTimestamp ?? '').localeCompare(b.metadata.creationTimestamp ?? '') ||
      key(a.metadata).localeCompare(key(b.metadata)),
  );
  const judged = new Map<string, Judged>();
  const byTarget = new Map<string, string[]>();
  for (const p of ordered) {
    judged.set(key(p.metadata), judge(p, configMap, can, adapter));
    for (const t of p.spec.targetRefs) {
      if (t.group !== '' || t.kind !== 'Service') continue;
      const k = `${p.metadata.namespace}/${t.name}/${t.sectionName ?? ''}`;
      const list = byTarget.get(k) ?? [];
      if (!list.includes(key(p.metadata))) list.push(key(p.metadata));
      byTarget.set(k, list);
    }
  }
  /** Policies that lose a target to an older one (GEP-713: Accepted False, Conflicted). */
  const conflicted = new Set([...byTarget.values()].flatMap((list) => list.slice(1)));
  const of = (ns: string, svc: string, port: string): TlsTarget | undefined => {
    const list =
      (port !== '' ? byTarget.get(`${ns}/${svc}/${port}`) : undefined) ?? byTarget.get(`${ns}/${svc}/`);
    if (!list) return undefined;
    const j = judged.get(list[0]!)!;
    return j.tls
      ? { policies: list, tls: j.tls }
      : { policies: list, problem: `BackendTLSPolicy ${list[0]}: ${j.accepted.message}` };
  };
  const conditionsOf = (policy: string): ConditionSpec[] => {
    const j = judged.get(policy)!;
    const accepted =
      conflicted.has(policy) && j.accepted.status
        ? cond('Accepted', false, 'Conflicted', 'an older policy targets the same Service port')
        : j.accepted;
    return j.resolvedRefs ? [accepted, j.resolvedRefs] : [accepted];
  };
  return {
    of,
    statuses: (hits) => {
      const out = new Map<string, TlsPolicyAncestor[]>();
      for (const [policy, gateways] of hits) {
        if (!judged.has(policy)) continue;
        out.set(
          policy,
          [...gateways].sort().map((gw) => {
            const [namespace = '', name = ''] = gw.split('/');
            return {
              ancestorRef: { group: GATEWAY_GROUP, kind: 'Gateway', namespace, name },
              conditions: conditionsOf(policy),
            };
          }),
        );
      }
      return out;
    },
  };
}
