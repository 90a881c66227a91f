/**
 * Reading health: HAProxy's `show servers state` (text captured from HAProxy 2.6 with one server
 * up, one down, one without a check and one at weight 0), and the simulators' TCP check.
 */
import assert from 'node:assert/strict';
import { createServer } from 'node:net';
import { describe, it } from 'node:test';
import { checkStatusName, parseServersState, rowHealth } from '../../../adapters/haproxy/server-state.ts';
import { runtimeServers } from '../../../sim/haproxy-dataplane/runtime-servers.ts';
import { isLoopback, MemberProber } from '../../../src/runtime/member-prober.ts';

const STATE = `1
# be_id be_name srv_id srv_name srv_addr srv_op_state srv_admin_state srv_uweight srv_iweight srv_time_since_last_change srv_check_status srv_check_result srv_check_health srv_check_state srv_agent_state bk_f_forced_id srv_f_forced_id srv_fqdn srv_port srvrecord srv_use_ssl srv_check_port srv_check_addr srv_agent_addr srv_agent_port
2 b1 1 up1 127.0.0.1 2 0 1 1 1 6 3 4 6 0 0 0 - 22 - 0 0 - - 0
2 b1 2 down1 127.0.0.1 0 0 1 1 2 8 2 0 6 0 0 0 - 1 - 0 0 - - 0
2 b1 3 nochk 127.0.0.1 2 0 1 1 2 1 0 2 0 0 0 0 - 1 - 0 0 - - 0
2 b1 4 drn 127.0.0.1 2 0 0 0 2 6 3 4 6 0 0 0 - 22 - 0 0 - - 0
3 b2 1 m 10.0.0.1 0 1 1 1 2 6 3 4 6 0 0 0 - 80 - 0 0 - - 0
3 b2 2 slot 10.0.0.2 2 4 1 1 2 6 3 4 6 0 0 0 - 80 - 0 0 - - 0

`;

describe('HAProxy server state', () => {
  it('reads operational state, admin state and the last check apart', () => {
    const rows = parseServersState(STATE);
    assert.deepEqual(
      rows.map((r) => [r.backend, r.server, r.address, r.port, rowHealth(r)]),
      [
        ['b1', 'up1', '127.0.0.1', 22, { admin: 'enabled', health: 'up', reason: 'L4OK' }],
        ['b1', 'down1', '127.0.0.1', 1, { admin: 'enabled', health: 'down', reason: 'L4CON' }],
        ['b1', 'nochk', '127.0.0.1', 1, { admin: 'enabled', health: 'unchecked' }],
        ['b1', 'drn', '127.0.0.1', 22, { admin: 'draining', health: 'up', reason: 'L4OK' }],
        ['b2', 'm', '10.0.0.1', 80, { admin: 'maint', health: 'down', reason: 'L4OK' }],
        // Configured `disabled`, enabled at runtime since: CMAINT alone is not maintenance.
        ['b2', 'slot', '10.0.0.2', 80, { admin: 'enabled', health: 'up', reason: 'L4OK' }],
      ],
    );
    // The Data Plane simulator reads the same table with its own code: the two agree row by row.
    const sim = runtimeServers(STATE);
    assert.deepEqual(
      sim.map((s) => [s.backend_name, s.name, s.address, s.port, s.operational_state, s.admin_state]),
      rows.map((r) => {
        const h = rowHealth(r);
        return [
          r.backend,
          r.server,
          r.address,
          r.port,
          r.opState === 0 ? 'down' : 'up',
          h.admin === 'maint' ? 'maint' : r.adminState & 0x18 ? 'drain' : 'ready',
        ];
      }),
    );
    assert.deepEqual([sim[1]!.operational_state, sim[4]!.admin_state, sim[3]!.iweight], ['down', 'maint', 0]);
    assert.equal(checkStatusName(99), 'status 99');
  });

  it('an answer that is not a state table (an error, an empty backend) gives no rows', () => {
    assert.deepEqual(parseServersState("Can't find backend.\n"), []);
    assert.deepEqual(parseServersState('1\n# be_id be_name srv_id srv_name\n'), []);
    assert.deepEqual(parseServersState(''), []);
  });
});

describe('simulated health checks', () => {
  it('probes loopback members by TCP connect; never probes any other address', async (t) => {
    const server = createServer((s) => s.destroy());
    await new Promise<void>((r) => server.listen(0, '127.0.0.1', r));
    t.after(() => new Promise<void>((r) => server.close(() => r())));
    const port = (server.address() as { port: number }).port;
    let clock = 0;
    const prober = new MemberProber({ intervalMs: 1000, timeoutMs: 500, now: () => clock });
    const targets = [
      { address: '127.0.0.1', port },
      { address: '192.0.2.1', port: 80 },
      { address: '10.0.0.1', port: 80 },
    ];
    const first = await prober.states(targets);
    assert.deepEqual(
      first.map((r) => r.health),
      ['up', 'unknown', 'unknown'],
    );
    assert.match(first[1]!.reason, /not a loopback address/);
    // The backend stops: the next probe after the interval says down, with why.
    await new Promise<void>((r) => server.close(() => r()));
    assert.equal(
      (await prober.states([targets[0]!]))[0]!.health,
      'up',
      'within the interval: the last result',
    );
    clock += 1000;
    const after = await prober.states([targets[0]!]);
    assert.equal(after[0]!.health, 'down');
    assert.equal(after[0]!.reason, 'ECONNREFUSED');
    assert.equal(isLoopback('::1'), true);
    assert.equal(isLoopback('::ffff:127.0.0.1'), false);
  });
});
