/**
 * Issue 50, item 3: a route kind is its rows. Its API row sits beside its schema (GATEWAY_ROUTES,
 * src/kube/gateway-objects.ts), its meaning in its semantics file (a RouteSemantics row, listed in
 * src/source/gateway/route-kinds.ts); the cache, the served resources, the view, listeners'
 * supportedKinds, attachment, placement, the features claimed, the annotated backends and the route
 * status writer all read the tables. Shown for GRPCRoute: no other product file spells it (the
 * chart's RBAC names its resource, and a test holds the RBAC to the table).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join, relative } from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { parse } from 'yaml';
import { KINDS } from '../../../src/controller/cache-kinds.ts';
import { GATEWAY_ROUTES, ROUTE_KEYS } from '../../../src/kube/gateway-objects.ts';
import { RESOURCES } from '../../../src/kube/paths.ts';
import { ROUTE_SEMANTICS } from '../../../src/source/gateway/route-kinds.ts';

const ROOT = fileURLToPath(new URL('../../../', import.meta.url));

/** The product's TypeScript files (src/ and adapters/), as paths from the root. */
function productFiles(): string[] {
  const out: string[] = [];
  const walk = (dir: string) => {
    for (const e of readdirSync(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) walk(p);
      else if (/\.(ts|js)$/.test(e.name) && !e.name.endsWith('.d.ts'))
        out.push(relative(ROOT, p).replace(/\.js$/, '.ts'));
    }
  };
  walk(join(ROOT, 'src'));
  walk(join(ROOT, 'adapters'));
  return [...new Set(out)].sort();
}

it('GRPCRoute is spelled in its schema file, its semantics file and the table that lists it, nowhere else', () => {
  const spelled = productFiles().filter((f) =>
    /GRPCRoute|GrpcRoute|grpcRoute|GRPC_ROUTE|grpcRules|grpc-rules/.test(readFileSync(join(ROOT, f), 'utf8')),
  );
  assert.deepEqual(spelled, [
    'src/kube/gateway-objects.ts',
    'src/source/gateway/grpc-rules.ts',
    'src/source/gateway/route-kinds.ts',
  ]);
});

it('every route kind has one API row and one semantics row, and the cache and resources come from them', () => {
  assert.deepEqual(
    ROUTE_SEMANTICS.map((r) => r.key).sort(),
    [...ROUTE_KEYS].sort(),
    'one semantics row per API row',
  );
  for (const k of ROUTE_KEYS) {
    const row = GATEWAY_ROUTES[k];
    assert.deepEqual(RESOURCES[k], {
      group: 'gateway.networking.k8s.io',
      version: 'v1',
      resource: row.resource,
      kind: row.kind,
    });
    assert.equal(KINDS[k].schema, row.schema, `${k}: the cache validates with the row's schema`);
    assert.equal(KINDS[k].resource, k);
  }
  // An L7 kind has rules; an HTTP/2 kind is served only where the load balancer speaks HTTP/2.
  const grpc = ROUTE_SEMANTICS.find((r) => r.http2);
  assert.ok(grpc?.rules && grpc.served);
  assert.equal(grpc.served({ HTTP: true, HTTPS: true, TLS: true, TCP: true, UDP: true }), false);
  assert.equal(grpc.served({ HTTP: true, HTTPS: true, TLS: true, TCP: true, UDP: true, http2: true }), true);
});

it("the chart's controller RBAC lists and watches every route kind and patches its status", () => {
  type Rule = { apiGroups: string[]; resources: string[]; verbs: string[] };
  // The template's Helm lines are not YAML; the rules block between them is.
  const text = readFileSync(join(ROOT, 'deploy/helm/npl-lb/templates/rbac.yaml'), 'utf8')
    .split('\n')
    .filter((l) => !l.includes('{{'))
    .join('\n');
  const rules = text
    .split(/^---$/m)
    .flatMap((d) => ((parse(d) as { rules?: Rule[] } | null)?.rules ?? []) as Rule[]);
  const allowed = (resource: string, verb: string) =>
    rules.some(
      (r) =>
        r.apiGroups.includes('gateway.networking.k8s.io') &&
        r.resources.includes(resource) &&
        r.verbs.includes(verb),
    );
  for (const k of ROUTE_KEYS) {
    const res = GATEWAY_ROUTES[k].resource;
    assert.ok(allowed(res, 'list') && allowed(res, 'watch'), `${res}: list, watch`);
    assert.ok(allowed(`${res}/status`, 'patch'), `${res}/status: patch`);
  }
});
