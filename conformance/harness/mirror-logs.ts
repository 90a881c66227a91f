/**
 * What upstream's mirror tests read (conformance/utils/http/mirror.go, kubernetes/logs.go): the
 * logs of a backend's Pods (label `app=<name>`, container `<name>`, since a time with the
 * API's one-second granularity), searched for echo-basic's line for a request's path.
 */
import type { Suite } from './suite.ts';
import { ConformanceFailure } from './status.ts';

/** echo-basic's line for a request made to `path` (upstream's GetMirrorLogRegexp). */
export const mirrorLogRegexp = (path: string): RegExp =>
  new RegExp(`Echoing back request made to ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} to client`);

/** The log lines of every Pod of the backend `name` in `ns` since `since` (DumpEchoLogs). */
export async function echoLogs(s: Suite, ns: string, name: string, since: number): Promise<string[]> {
  const list = (await s.rig.api.get(
    `/api/v1/namespaces/${ns}/pods?labelSelector=${encodeURIComponent(`app=${name}`)}`,
  )) as { items?: { metadata: { name: string }; status?: { phase?: string } }[] } | undefined;
  const sinceTime = new Date(Math.floor(since / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
  const lines: string[] = [];
  for (const pod of list?.items ?? []) {
    if (pod.status?.phase === 'Failed') continue;
    const q = new URLSearchParams({ container: name, sinceTime });
    try {
      const text = await s.rig.api.text(`/api/v1/namespaces/${ns}/pods/${pod.metadata.name}/log?${q}`);
      lines.push(...text.split('\n').filter(Boolean));
    } catch {
      // A Pod gone between the list and its log: its lines are not counted, as upstream skips it.
    }
  }
  return lines;
}

/**
 * ExpectMirroredRequest: each mirror's Pods log the request made to `path`, within the bound;
 * `since` is when the sending began (upstream widens it by the consistency bound).
 */
export async function expectMirrored(
  s: Suite,
  mirrors: { namespace: string; name: string }[],
  path: string,
  since: number,
): Promise<void> {
  const re = mirrorLogRegexp(path);
  const from = since - s.timeouts.consistencyMs;
  for (const m of mirrors) {
    const deadline = Date.now() + s.timeouts.consistencyMs;
    for (;;) {
      if ((await echoLogs(s, m.namespace, m.name, from)).some((l) => re.test(l))) break;
      if (Date.now() > deadline)
        throw new ConformanceFailure(
          `Couldn't find mirrored request in "${m.namespace}/${m.name}" logs (${path})`,
        );
      await new Promise((r) => setTimeout(r, 250));
    }
    s.log(`found ${path} in ${m.namespace}/${m.name} logs`);
  }
}
