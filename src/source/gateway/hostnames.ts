/**
 * Hostname intersection as the Gateway API defines it: a listener's hostname and a route's
 * hostnames give the hosts the route is served for on that listener. A wildcard `*.example.com` is
 * a suffix match of one or more labels (never `example.com` itself). Pure.
 */

const suffixOf = (wildcard: string): string => wildcard.slice(1); // '.example.com'

/** Whether a wildcard covers a host (or a narrower wildcard). */
function covers(wildcard: string, host: string): boolean {
  const suffix = suffixOf(wildcard);
  const bare = host.startsWith('*.') ? host.slice(1) : host;
  return bare.endsWith(suffix) && bare.length > suffix.length;
}

/** The narrower of two hostnames when one contains the other; undefined when they share no host. */
export function intersectHost(a: string, b: string): string | undefined {
  if (a === b) return a;
  const wa = a.startsWith('*.');
  const wb = b.startsWith('*.');
  if (wa && covers(a, b)) return b;
  if (wb && covers(b, a)) return a;
  return undefined;
}

/**
 * The hosts a route is served for on a listener: '' (any) when neither names one. Empty when the
 * route names hosts and none meets the listener's (the route does not attach: NoMatchingListenerHostname).
 */
export function effectiveHostnames(listener: string | undefined, route: readonly string[]): string[] {
  if (route.length === 0) return [listener ?? ''];
  if (!listener) return [...new Set(route)];
  const out = new Set<string>();
  for (const h of route) {
    const i = intersectHost(listener, h);
    if (i !== undefined) out.add(i);
  }
  return [...out];
}

/** Whether every host `inner` stands for is one `outer` stands for ('' is any host). */
export function within(inner: string, outer: string): boolean {
  if (outer === '' || inner === outer) return true;
  return outer.startsWith('*.') && inner !== '' && covers(outer, inner);
}

/**
 * Listener isolation (GatewayHTTPListenerIsolation): the hosts of a route on a listener, without
 * those a more specific listener on the same port takes whole. A request goes to the listener
 * whose hostname matches it most specifically, so a route of the wider listener never sees them.
 */
export function isolatedHosts(
  hosts: string[],
  listener: string | undefined,
  others: (string | undefined)[],
): string[] {
  const own = listener ?? '';
  const narrower = others.map((o) => o ?? '').filter((o) => o !== own && within(o, own));
  return hosts.filter((h) => !narrower.some((o) => within(h, o)));
}
