/**
 * A HAProxy started by HaproxyProcess does not outlive the Node process that started it, even one
 * that exits without stopping it: a HAProxy left behind keeps its ports, and with SO_REUSEPORT the
 * next HAProxy on the same VIP shares them with it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { renderConfig, SYSTEM_CA_FILE } from '../../../adapters/haproxy/config.ts';
import { adminSocket, configPath, socketCommand } from '../../../adapters/haproxy/process.ts';
import { ROOT, run } from '../../support/cli-process.ts';
import { haproxyMissing, startHaproxy } from '../../support/haproxy.ts';
import { eventually } from '../../support/sandbox.ts';

/** Running and not a zombie (this machine's init may not reap orphans). */
function alive(pid: number): boolean {
  try {
    return !/^\d+ \(.*\) Z/.test(readFileSync(`/proc/${pid}/stat`, 'utf8'));
  } catch {
    return false;
  }
}

describe('HAProxy process', { skip: haproxyMissing() }, () => {
  it('is stopped when the Node process that started it exits without stopping it', async (t) => {
    const dir = mkdtempSync(join(tmpdir(), 'npl-haproxy-exit-'));
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    const paths = { bin: 'haproxy', workDir: dir };
    writeFileSync(
      configPath(paths),
      renderConfig([], [], [], { owner: '', adminSocket: adminSocket(paths) }),
    );
    // The child starts HAProxy, prints the master's and the worker's PIDs, and exits at once.
    const script = `
      import { HaproxyProcess } from './adapters/haproxy/process.ts';
      const p = new HaproxyProcess({ bin: 'haproxy', workDir: ${JSON.stringify(dir)} });
      await p.start();
      const worker = /^Pid: (\\d+)/m.exec(await p.runtime('show info'))[1];
      console.log(JSON.stringify({ master: p.pid, worker: Number(worker) }));
      process.exit(0);
    `;
    const { stdout } = await run(process.execPath, ['--import', 'tsx', '--input-type=module', '-e', script], {
      cwd: ROOT,
    });
    const pids = JSON.parse(stdout.trim().split('\n').pop()!) as { master: number; worker: number };
    // Should the hook be missing, stop what the child left before failing.
    t.after(() => {
      for (const pid of [pids.worker, pids.master]) if (alive(pid)) process.kill(pid, 'SIGKILL');
    });
    await eventually(() => !alive(pids.master) && !alive(pids.worker), 10_000, 'HAProxy stopped');
    await assert.rejects(socketCommand(adminSocket(paths), 'show info', 1000));
  });
});

describe('HAProxy started from our global', { skip: haproxyMissing() }, () => {
  // HAProxy 2.6 loads every system CA for its own HTTP client at each start, reload and check
  // (about half of a small configuration's start) unless the global says the client needs none.
  it('loads no system CA until a server line asks for them, and then it does', async (t) => {
    const rig = await startHaproxy(t);
    const caFiles = async () => (await rig.proc.runtime('show ssl ca-file')).trim();
    assert.doesNotMatch(await caFiles(), /@system-ca/);
    // A pool verified against the System CAs (BackendTLSPolicy wellKnownCACertificates: System).
    const file = configPath(rig.paths);
    writeFileSync(
      file,
      `${readFileSync(file, 'utf8')}\nbackend verified\n    mode http\n    server s1 127.0.0.1:9 ssl verify required ca-file ${SYSTEM_CA_FILE} sni str(a.example.com)\n`,
    );
    await rig.proc.reload();
    assert.match(await caFiles(), /^@system-ca - \d+ certificate\(s\)$/m);
  });
});

describe("the master socket's re-execution window", () => {
  it('a reload command waits out a socket that is missing or refused for a moment; then it is final', async (t) => {
    const { createServer } = await import('node:net');
    const { masterCommand } = await import('../../../adapters/haproxy/process.ts');
    const dir = mkdtempSync(join(tmpdir(), 'npl-master-'));
    const sock = join(dir, 'master.sock');
    const servers: { close: () => void }[] = [];
    t.after(() => {
      for (const s of servers) s.close();
      rmSync(dir, { recursive: true, force: true });
    });
    // No socket yet (the master re-executing): it appears 300 ms later and answers.
    const appears = new Promise<void>((resolve) =>
      setTimeout(() => {
        const srv = createServer((c) => c.on('data', () => c.end('Success=1\n')));
        servers.push(srv);
        srv.listen(sock, () => resolve());
      }, 300),
    );
    const started = Date.now();
    assert.equal(await masterCommand(sock, 'reload'), 'Success=1\n');
    assert.ok(Date.now() - started >= 250, 'it waited for the socket');
    await appears;
    // A socket that never comes: refused after the wait, with why.
    await assert.rejects(masterCommand(join(dir, 'never.sock'), 'reload', 300), /ENOENT/);
  });
});
