/**
 * The member check from the Pods' readiness probes: the probe on the Service's target port (by
 * number or by name) gives an HTTP check of its path at its timings (clamped to sane bounds); a
 * TCP probe, a probe on another port, an exec probe or none leaves the TCP check; Pods that
 * disagree (a rollout) give the probe most carry, ties to the first Pod by name, whatever the
 * order; what cannot be followed as written says why; UDP ports are never HTTP-checked.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { podSchema } from '../../../src/kube/objects.ts';
import { checkFromProbes } from '../../../src/source/health-check.ts';

const pod = (name: string, readinessProbe?: object, ports = [{ name: 'http', containerPort: 8080 }]) =>
  podSchema.parse({
    metadata: { name, namespace: 'ns', labels: { app: 'web' } },
    spec: { containers: [{ name: 'c', ports, ...(readinessProbe ? { readinessProbe } : {}) }] },
    status: { phase: 'Running', podIP: '10.0.0.1' },
  });
const port = { name: 'http', port: 80, targetPort: 'http', protocol: 'TCP' as const };
const http = (path: string, p: number | string = 'http', extra: object = {}) => ({
  httpGet: { path, port: p },
  ...extra,
});

const hdr = (httpHeaders: { name: string; value: string }[]) => ({
  httpGet: { path: '/h', port: 'http', httpHeaders },
});

describe('checkFromProbes', () => {
  it('an HTTP probe on the target port (by name or number) is the check, with its timings', () => {
    for (const p of ['http', 8080, '8080'])
      assert.deepEqual(
        checkFromProbes(port, [
          pod(
            'a',
            http('/healthz', p, {
              periodSeconds: 5,
              timeoutSeconds: 2,
              successThreshold: 2,
              failureThreshold: 4,
            }),
          ),
        ]),
        {
          check: { type: 'http', path: '/healthz', intervalSeconds: 5, timeoutSeconds: 2, rise: 2, fall: 4 },
        },
      );
    // The API server's defaults: every 10 s, 1 s timeout, up after 1, down after 3.
    assert.deepEqual(checkFromProbes(port, [pod('a', http('/'))]).check, {
      type: 'http',
      path: '/',
      intervalSeconds: 10,
      timeoutSeconds: 1,
      rise: 1,
      fall: 3,
    });
  });

  it('timings are clamped: interval 1..300 s, timeout up to the interval, thresholds 1..10', () => {
    const c = checkFromProbes(port, [
      pod(
        'a',
        http('/h', 'http', {
          periodSeconds: 0,
          timeoutSeconds: 99,
          successThreshold: 50,
          failureThreshold: -1,
        }),
      ),
    ]).check!;
    assert.deepEqual([c.intervalSeconds, c.timeoutSeconds, c.rise, c.fall], [1, 1, 10, 1]);
  });

  it('a TCP probe, another port, an exec probe, no probe, a UDP port: the TCP check', () => {
    assert.deepEqual(checkFromProbes(port, [pod('a', { tcpSocket: { port: 'http' } })]), {});
    assert.deepEqual(checkFromProbes(port, [pod('a', http('/healthz', 9090))]), {});
    assert.deepEqual(checkFromProbes(port, [pod('a', { exec: { command: ['true'] } })]), {});
    assert.deepEqual(checkFromProbes(port, [pod('a')]), {});
    assert.deepEqual(checkFromProbes({ ...port, protocol: 'UDP' }, [pod('a', http('/healthz'))]), {});
  });

  it('Pods that disagree: the probe most carry, ties to the first Pod by name, in any order', () => {
    const pods = [pod('c', http('/new')), pod('a', http('/old')), pod('b', http('/new'))];
    assert.equal(checkFromProbes(port, pods).check?.path, '/new');
    assert.equal(checkFromProbes(port, [...pods].reverse()).check?.path, '/new');
    const tie = [pod('b', http('/b')), pod('a', http('/a'))];
    assert.equal(checkFromProbes(port, tie).check?.path, '/a');
    assert.equal(checkFromProbes(port, [...tie].reverse()).check?.path, '/a');
  });

  it('what cannot be followed as written says why (and is no check)', () => {
    const cases: [object, RegExp][] = [
      [http('/h', 'http', {}), /^$/],
      [{ httpGet: { path: '/h', port: 'http', host: '10.0.0.9' } }, /connects to host "10\.0\.0\.9"/],
      // Headers a device would misread: not a token, a CR/LF, a control character, too many.
      [hdr([{ name: 'X Probe', value: '1' }]), /"X Probe" is not a header name/],
      [hdr([{ name: 'X-A', value: 'a\r\nX-B: b' }]), /the value of X-A is not printable ASCII/],
      [hdr([{ name: 'X-A', value: 'tab\there' }]), /the value of X-A/],
      [hdr([{ name: 'X-A', value: ' padded' }]), /the value of X-A/],
      [hdr(Array.from({ length: 9 }, (_, i) => ({ name: `X-${i}`, value: '1' }))), /9 headers \(at most 8\)/],
      [{ httpGet: { path: "/h' http-request deny", port: 'http' } }, /path/],
      [{ httpGet: { path: 'relative', port: 'http' } }, /must start with/],
    ];
    for (const [probe, why] of cases.slice(1)) {
      const r = checkFromProbes(port, [pod('a', probe)]);
      assert.equal(r.check, undefined, JSON.stringify(probe));
      assert.match(r.notFollowed ?? '', why);
    }
  });

  it('a probe with headers (Host among them) is a check that sends them', () => {
    const r = checkFromProbes(port, [
      pod(
        'a',
        hdr([
          { name: 'Host', value: 'app.example.com' },
          { name: 'X-Probe', value: 'a b' },
        ]),
      ),
    ]);
    assert.deepEqual(r.check?.headers, [
      { name: 'Host', value: 'app.example.com' },
      { name: 'X-Probe', value: 'a b' },
    ]);
    assert.equal(r.notFollowed, undefined);
  });

  it('an HTTPS probe is an HTTPS check (over TLS, the certificate not verified, as the kubelet)', () => {
    const r = checkFromProbes(port, [pod('a', { httpGet: { path: '/h', port: 'http', scheme: 'HTTPS' } })]);
    assert.equal(r.notFollowed, undefined);
    assert.deepEqual(r.check, {
      type: 'http',
      path: '/h',
      tls: true,
      intervalSeconds: 10,
      timeoutSeconds: 1,
      rise: 1,
      fall: 3,
    });
    // An HTTP probe carries no tls mark at all (stored checks compare equal across versions).
    assert.equal('tls' in checkFromProbes(port, [pod('a', http('/h'))]).check!, false);
  });

  it('a probe the schema cannot read leaves the Pod (and its members) as they are', () => {
    const p = pod('a', { httpGet: { path: 5, port: { bad: true } } });
    assert.equal(p.spec.containers[0]!.readinessProbe, undefined);
    assert.deepEqual(checkFromProbes(port, [p]), {});
  });
});

describe('a pool on a load balancer without HTTP checks', () => {
  it('keeps the TCP check and says so on the Service, naming the load balancer', async () => {
    const { buildPool, poolContext } = await import('../../../src/source/pools.ts');
    const { parseControllerConfig } = await import('../../../src/config/controller-config.ts');
    const { SERVE_ALL } = await import('../../../src/source/gateway/from-view.ts');
    const { kubeService } = await import('../../support/kube-objects.ts');
    const svc = kubeService('web', { ports: [port] });
    const cfg = parseControllerConfig('clusterName: c1\nserviceType: ClusterIP\n');
    const view = {
      services: [svc],
      ingresses: [],
      ingressClasses: [],
      nodes: [],
      pods: [pod('a', http('/healthz'))],
    };
    const req = {
      name: 'c1--ns-web-http',
      svc,
      svcKey: 'default/web',
      port: svc.spec.ports[0]!,
      health: 'http' as const,
    };
    view.pods[0]!.metadata.namespace = 'default';
    const avi = { name: 'avi', caps: { ...SERVE_ALL.caps, httpChecks: false } };
    const off = buildPool(req, poolContext(view, cfg, avi));
    assert.equal(off.pool.check, undefined);
    assert.deepEqual(
      off.findings.map((f) => [f.kind, f.key, f.reason]),
      [['Service', 'default/web', 'ProbeNotFollowed']],
    );
    assert.match(off.findings[0]!.message, /the avi load balancer does not run HTTP checks/);
    const on = buildPool(req, poolContext(view, cfg, SERVE_ALL));
    assert.equal(on.pool.check?.path, '/healthz');
    assert.deepEqual(on.findings, []);

    // HTTPS: an L4 pool gets it where the load balancer runs HTTPS checks; an L7 pool never (its
    // Pods serve TLS on the port, which plain-HTTP routes cannot reach); others say they cannot.
    view.pods = [pod('a', { httpGet: { path: '/healthz', port: 'http', scheme: 'HTTPS' } })];
    view.pods[0]!.metadata.namespace = 'default';
    const l4 = { ...req, health: 'tcp' as const };
    assert.equal(buildPool(l4, poolContext(view, cfg, SERVE_ALL)).pool.check?.tls, true);
    const l7 = buildPool(req, poolContext(view, cfg, SERVE_ALL));
    assert.equal(l7.pool.check, undefined);
    assert.match(l7.findings[0]!.message, /HTTPS.*TLS to the backends is not supported/);
    const f5 = { name: 'f5', caps: { ...SERVE_ALL.caps, httpsChecks: false } };
    const noTls = buildPool(l4, poolContext(view, cfg, f5));
    assert.equal(noTls.pool.check, undefined);
    assert.match(noTls.findings[0]!.message, /the f5 load balancer does not run HTTPS checks/);
  });
});
