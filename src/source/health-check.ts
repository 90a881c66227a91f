/**
 * The member check of a pool, from the application's own word: its Pods' readiness probe, when the
 * probe targets the Service port's target port (NodePortLocal maps exactly that port, so the load
 * balancer reaches it at each member's nodeIP:nodePort). An HTTP GET probe gives an HTTP check of
 * that path, 2xx or 3xx meaning up as for the kubelet, at the probe's period and timeout, up after
 * successThreshold and down after failureThreshold results in a row. A TCP probe, or none, leaves
 * the TCP connect check: without the owner's word any HTTP path is a guess, and an API that
 * answers 404 on `/` is healthy (the kubelet's readiness still gates each member).
 *
 * Pods of one Service may disagree (a rollout): the probe most of them carry wins, ties going to
 * the first Pod by name, so the result does not depend on the order Pods are listed in. A probe
 * the load balancer cannot follow as written (HTTPS, extra headers, another host, a path that
 * fails the validation boundary) is not followed, and the reason says why. An HTTPS probe gives
 * an HTTPS check, the certificate not verified (the kubelet does not verify it either). Pure.
 */
import type { Pod, Probe } from '../kube/objects.ts';
import { podTerminated, resolveTargetPort } from '../kube/pod-ports.ts';
import type { HttpCheck } from '../model/types.ts';
import type { ServicePort } from './types.ts';
import { headerProblem, pathProblem } from './validate.ts';

export interface CheckFromProbe {
  check?: HttpCheck;
  /** Why the Pods' HTTP probe is not the check (a Warning on the Service). */
  notFollowed?: string;
}

const clamp = (v: number, lo: number, hi: number): number => Math.min(hi, Math.max(lo, v));

/** The probe of the container serving `target`, when it probes that port. */
function probeOn(pod: Pod, target: number): Probe | undefined {
  for (const c of pod.spec.containers) {
    const probe = c.readinessProbe;
    const named = probe?.httpGet?.port ?? probe?.tcpSocket?.port;
    if (!probe || named === undefined) continue;
    const port =
      typeof named === 'number'
        ? named
        : /^\d+$/.test(named)
          ? Number(named)
          : c.ports.find((p) => p.name === named)?.containerPort;
    if (port === target) return probe;
  }
  return undefined;
}

function fromProbe(p: Probe): CheckFromProbe {
  const get = p.httpGet;
  if (!get) return {};
  // `host` is where the kubelet connects (not a Host header): the load balancer connects to
  // nodeIP:nodePort, so such a probe cannot be followed.
  if (get.host)
    return { notFollowed: `its readiness probe connects to host ${JSON.stringify(get.host.slice(0, 64))}` };
  const badHeader = headerProblem(get.httpHeaders);
  if (badHeader) return { notFollowed: `its readiness probe's httpHeaders: ${badHeader}` };
  const bad = pathProblem(get.path, 'Exact');
  if (bad) return { notFollowed: `its readiness probe's path: ${bad}` };
  const interval = clamp(p.periodSeconds, 1, 300);
  return {
    check: {
      type: 'http',
      path: get.path,
      intervalSeconds: interval,
      timeoutSeconds: clamp(p.timeoutSeconds, 1, interval),
      rise: clamp(p.successThreshold, 1, 10),
      fall: clamp(p.failureThreshold, 1, 10),
      ...(get.scheme === 'HTTPS' ? { tls: true as const } : {}),
      ...(get.httpHeaders.length > 0
        ? { headers: get.httpHeaders.map((h) => ({ name: h.name, value: h.value })) }
        : {}),
    },
  };
}

/** The check of a Service port's pool, from the probes of the Pods it selects. */
export function checkFromProbes(port: ServicePort, pods: readonly Pod[]): CheckFromProbe {
  if (port.protocol === 'UDP') return {};
  const votes = new Map<string, { probe: Probe; count: number; first: string }>();
  for (const pod of pods) {
    if (podTerminated(pod)) continue;
    const target = resolveTargetPort(pod, port.targetPort, port.port, port.protocol);
    const probe = target === undefined ? undefined : probeOn(pod, target);
    if (!probe) continue;
    const key = JSON.stringify([
      probe.httpGet ?? null,
      probe.tcpSocket ?? null,
      probe.periodSeconds,
      probe.timeoutSeconds,
      probe.successThreshold,
      probe.failureThreshold,
    ]);
    const v = votes.get(key);
    if (v) {
      v.count++;
      if (pod.metadata.name < v.first) v.first = pod.metadata.name;
    } else votes.set(key, { probe, count: 1, first: pod.metadata.name });
  }
  let best: { probe: Probe; count: number; first: string } | undefined;
  for (const v of votes.values())
    if (!best || v.count > best.count || (v.count === best.count && v.first < best.first)) best = v;
  return best ? fromProbe(best.probe) : {};
}
