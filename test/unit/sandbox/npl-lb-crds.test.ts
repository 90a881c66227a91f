/**
 * The chart's BackendPolicy CRD, installed into the sandbox as Helm installs it: its schema and CEL
 * rules refuse bad values at the API (422, naming the field) before any controller reads them,
 * and take the good ones.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { installNplLbCrds } from '../../../src/sandbox/npl-lb-crds.ts';
import { api, useSandbox } from '../../support/sandbox.ts';

const web = { group: '', kind: 'Service', name: 'web' };

describe('the BackendPolicy CRD at the API', () => {
  it('refuses bad values with the field named, takes good ones', async (t) => {
    const { url } = await useSandbox(t);
    assert.equal(await installNplLbCrds(url), 2);
    const post = async (name: string, spec: object) =>
      api(url, 'POST', '/apis/npl-lb.io/v1alpha1/namespaces/default/backendpolicies', {
        apiVersion: 'npl-lb.io/v1alpha1',
        kind: 'BackendPolicy',
        metadata: { name },
        spec,
      });
    const good: [string, object][] = [
      ['lc', { targetRefs: [web], algorithm: 'LeastConnections', sessionPersistence: { type: 'Cookie' } }],
      ['port', { targetRefs: [{ ...web, sectionName: 'http' }, web], maxConnectionsPerMember: 10 }],
      [
        'hc',
        {
          targetRefs: [web],
          healthCheck: { type: 'HTTP', path: '/h', headers: [{ name: 'Host', value: 'a.example' }] },
        },
      ],
      ['tcp', { targetRefs: [web], healthCheck: { type: 'TCP' }, slowStartSeconds: 60 }],
      [
        'head',
        {
          targetRefs: [web],
          healthCheck: {
            type: 'HTTP',
            path: '/h',
            method: 'HEAD',
            expectedStatuses: [{ from: 204 }, { from: 200, to: 299 }],
          },
        },
      ],
      ['timeouts', { targetRefs: [web], timeouts: { connectSeconds: 3, serverSeconds: 300 } }],
      ['retries', { targetRefs: [web], retries: { attempts: 0 } }],
      ['hdrhash', { targetRefs: [web], algorithm: 'HeaderHash', hashKey: 'x-user' }],
    ];
    for (const [name, spec] of good) assert.equal((await post(name, spec)).status, 201, name);
    const bad: [string, object, RegExp][] = [
      ['kind', { targetRefs: [{ group: 'apps', kind: 'Deployment', name: 'web' }] }, /targets Services/],
      ['twice', { targetRefs: [web, web] }, /each target may be named once/],
      ['none', { targetRefs: [] }, /spec\.targetRefs/],
      ['algo', { targetRefs: [web], algorithm: 'Random' }, /spec\.algorithm/],
      ['persist', { targetRefs: [web], sessionPersistence: { type: 'Header' } }, /sessionPersistence\.type/],
      ['section', { targetRefs: [{ ...web, sectionName: 'Not A Name' }] }, /sectionName/],
      ['limit', { targetRefs: [web], maxConnectionsPerMember: 0 }, /maxConnectionsPerMember/],
      ['ramp', { targetRefs: [web], slowStartSeconds: 3601 }, /slowStartSeconds/],
      ['manyretries', { targetRefs: [web], retries: { attempts: 6 } }, /spec\.retries\.attempts/],
      ['nokey', { targetRefs: [web], algorithm: 'CookieHash' }, /hashKey names the header/],
      ['straykey', { targetRefs: [web], hashKey: 'x-user' }, /hashKey names the header/],
      ['badkey', { targetRefs: [web], algorithm: 'HeaderHash', hashKey: 'a b' }, /spec\.hashKey/],
      ['noattempts', { targetRefs: [web], retries: {} }, /spec\.retries\.attempts/],
      ['notimeout', { targetRefs: [web], timeouts: {} }, /spec\.timeouts/],
      [
        'slowserver',
        { targetRefs: [web], timeouts: { serverSeconds: 86401 } },
        /spec\.timeouts\.serverSeconds/,
      ],
      [
        'zeroconnect',
        { targetRefs: [web], timeouts: { connectSeconds: 0 } },
        /spec\.timeouts\.connectSeconds/,
      ],
      ['nopath', { targetRefs: [web], healthCheck: { type: 'HTTP' } }, /an HTTP check needs a path/],
      [
        'tcppath',
        { targetRefs: [web], healthCheck: { type: 'TCP', path: '/x' } },
        /an HTTP check needs a path/,
      ],
      ['relative', { targetRefs: [web], healthCheck: { type: 'HTTP', path: 'x' } }, /healthCheck\.path/],
      [
        'slow',
        {
          targetRefs: [web],
          healthCheck: { type: 'HTTP', path: '/x', intervalSeconds: 2, timeoutSeconds: 5 },
        },
        /timeoutSeconds must not exceed/,
      ],
      [
        'hname',
        {
          targetRefs: [web],
          healthCheck: { type: 'HTTP', path: '/x', headers: [{ name: 'X A', value: '1' }] },
        },
        /headers\[0\]\.name/,
      ],
      [
        'hvalue',
        {
          targetRefs: [web],
          healthCheck: { type: 'HTTP', path: '/x', headers: [{ name: 'X-A', value: 'a\r\nb' }] },
        },
        /headers\[0\]\.value/,
      ],
    ];
    const hc = (o: object) => ({ targetRefs: [web], healthCheck: { type: 'HTTP', path: '/x', ...o } });
    bad.push(
      ['backwards', hc({ expectedStatuses: [{ from: 300, to: 200 }] }), /from must not exceed to/],
      ['code600', hc({ expectedStatuses: [{ from: 600 }] }), /expectedStatuses\[0\]\.from/],
      ['nocodes', hc({ expectedStatuses: [] }), /expectedStatuses/],
      ['put', hc({ method: 'PUT' }), /healthCheck\.method/],
      [
        'tcphead',
        { targetRefs: [web], healthCheck: { type: 'TCP', method: 'HEAD' } },
        /method and expectedStatuses are for an HTTP check/,
      ],
    );
    for (const [name, spec, why] of bad) {
      const r = await post(name, spec);
      assert.equal(r.status, 422, `${name}: ${JSON.stringify(r.body).slice(0, 200)}`);
      assert.match(String(r.body.message), why, name);
    }
    // A field the schema does not have is pruned, as a real API server does (kubectl warns).
    const extra = await post('extra', { targetRefs: [web], mirror: { to: 'x' } });
    assert.equal(extra.status, 201);
    assert.deepEqual(extra.body.spec, { targetRefs: [web] });
  });

  it('LoadBalancerParameters: refuses bad values with the field named, takes good ones', async (t) => {
    const { url } = await useSandbox(t);
    await installNplLbCrds(url);
    const post = (name: string, spec: object) =>
      api(url, 'POST', '/apis/npl-lb.io/v1alpha1/namespaces/default/loadbalancerparameters', {
        apiVersion: 'npl-lb.io/v1alpha1',
        kind: 'LoadBalancerParameters',
        metadata: { name },
        spec,
      });
    assert.equal((await post('team-a', { avi: { serviceEngineGroup: 'se-team-a' } })).status, 201);
    assert.equal(
      (await post('both', { avi: { serviceEngineGroup: 'g1' }, f5: { partition: 'team_b' } })).status,
      201,
    );
    assert.equal((await post('range', { vip: { cidrs: ['192.0.2.16/28', 'fd00:10::/120'] } })).status, 201);
    assert.equal(
      (
        await post('defaults', {
          defaults: {
            algorithm: 'HeaderHash',
            hashKey: 'x-user',
            healthCheck: { type: 'HTTP', path: '/healthz' },
          },
        })
      ).status,
      201,
    );
    for (const [name, spec, why] of [
      ['empty', {}, /name the avi, f5, haproxy, vip or defaults settings/],
      ['notcidr', { vip: { cidrs: ['192.0.2.16'] } }, /spec\.vip\.cidrs\[0\].*must be a CIDR/],
      ['badbits', { vip: { cidrs: ['192.0.2.16/33'] } }, /must be a CIDR/],
      ['nocidrs', { vip: { cidrs: [] } }, /spec\.vip\.cidrs/],
      ['common', { f5: { partition: 'Common' } }, /AS3's own names/],
      ['nodefaults', { defaults: {} }, /name an algorithm, a healthCheck or both/],
      ['nohashkey', { defaults: { algorithm: 'CookieHash' } }, /hashKey names the header/],
      ['nocheckpath', { defaults: { healthCheck: { type: 'HTTP' } } }, /an HTTP check needs a path/],
      ['nofront', { haproxy: { frontend: {} } }, /name maxConnections, clientTimeoutSeconds or both/],
      [
        'zeroconn',
        { haproxy: { frontend: { maxConnections: 0 } } },
        /spec\.haproxy\.frontend\.maxConnections/,
      ],
      ['longidle', { haproxy: { frontend: { clientTimeoutSeconds: 86401 } } }, /clientTimeoutSeconds/],
      ['segroup', { avi: { serviceEngineGroup: 'has space' } }, /spec\.avi\.serviceEngineGroup/],
      ['nosegroup', { avi: {} }, /serviceEngineGroup/],
      ['partition', { f5: { partition: '9lives' } }, /spec\.f5\.partition/],
    ] as const) {
      const r = await post(name, spec);
      assert.equal(r.status, 422, `${name}: ${JSON.stringify(r.body).slice(0, 200)}`);
      assert.match(String(r.body.message), why, name);
    }
  });
});
