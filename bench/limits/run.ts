/**
 * Issue 46's input limits, measured side by side in one run:
 * - server-side apply of a ConfigMap of N keys (JSON, as kubectl sends it, and YAML block style)
 *   against a JSON create of the same object, on the sandbox as its own process, with the longest
 *   wait of a `GET /version` polled every 10 ms from another connection meanwhile (the event-loop
 *   stall a client sees);
 * - `npl-lb migrate ako` on values files of 1, 2.5 and 10 MB (time per MB, and the exit code).
 * Bounded: fixed sizes, 5 rounds each, the whole run aborts after 10 minutes. Loopback only.
 *
 *   npm run bench:limits [-- --keys 16000 --rounds 5]
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Agent, request } from 'undici';
import { stringify } from 'yaml';
import { startSandboxProcess } from '../sandbox-process.ts';

const { values } = parseArgs({
  options: { keys: { type: 'string', default: '16000' }, rounds: { type: 'string', default: '5' } },
});
const KEYS = Number(values.keys);
const ROUNDS = Number(values.rounds);
const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const deadline = setTimeout(() => {
  console.error('benchmark exceeded 10 minutes; aborting');
  process.exit(1);
}, 600_000);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function sandboxFigures(): Promise<void> {
  const { url, child } = await startSandboxProcess();
  const writer = new Agent({ connections: 1 });
  const poller = new Agent({ connections: 1 });
  const send = async (method: 'POST' | 'PATCH', path: string, body: string, type: string) => {
    const t0 = performance.now();
    const r = await request(url + path, {
      method,
      body,
      headers: { 'content-type': type },
      dispatcher: writer,
    });
    await r.body.text();
    if (r.statusCode >= 300) throw new Error(`${method} ${path}: ${r.statusCode}`);
    return performance.now() - t0;
  };
  /** The longest /version wait while `work` runs. */
  const stallDuring = async (work: () => Promise<number>) => {
    let worst = 0;
    let done = false;
    const poll = (async () => {
      while (!done) {
        const t0 = performance.now();
        const r = await request(`${url}/version`, { dispatcher: poller });
        await r.body.text();
        worst = Math.max(worst, performance.now() - t0);
        await new Promise((res) => setTimeout(res, 10));
      }
    })();
    const ms = await work();
    done = true;
    await poll;
    return { ms, worst };
  };
  const data: Record<string, string> = {};
  for (let i = 0; i < KEYS; i++) data[`key-${i}`] = `value-${i}`;
  const cm = (name: string) => ({
    apiVersion: 'v1',
    kind: 'ConfigMap',
    metadata: { name, namespace: 'default' },
    data,
  });
  const rows: Record<string, { ms: number[]; stall: number[] }> = {};
  const add = (k: string, r: { ms: number; worst: number }) => {
    rows[k] ??= { ms: [], stall: [] };
    rows[k].ms.push(r.ms);
    rows[k].stall.push(r.worst);
  };
  for (let i = 0; i < ROUNDS; i++) {
    const createText = JSON.stringify(cm(`c${i}`));
    add(
      'JSON create',
      await stallDuring(() =>
        send('POST', '/api/v1/namespaces/default/configmaps', createText, 'application/json'),
      ),
    );
    const apply = (name: string, text: string) =>
      send(
        'PATCH',
        `/api/v1/namespaces/default/configmaps/${name}?fieldManager=bench`,
        text,
        'application/apply-patch+yaml',
      );
    const jsonText = JSON.stringify(cm(`a${i}`));
    add('apply (JSON body), create', await stallDuring(() => apply(`a${i}`, jsonText)));
    add('apply (JSON body), unchanged', await stallDuring(() => apply(`a${i}`, jsonText)));
    // Rendered before the clock starts: the bench's own event loop is the poller's too.
    const yamlText = stringify(cm(`y${i}`));
    add('apply (YAML body), create', await stallDuring(() => apply(`y${i}`, yamlText)));
  }
  child.kill('SIGTERM');
  await Promise.all([writer.close(), poller.close()]);
  const base = median(rows['JSON create']!.ms);
  console.log(`\nsandbox, ConfigMap of ${KEYS} keys, median of ${ROUNDS}:`);
  console.log('| request | time | per 1,000 keys | vs JSON create | longest /version wait |');
  console.log('| --- | ---: | ---: | ---: | ---: |');
  for (const [k, r] of Object.entries(rows)) {
    const m = median(r.ms);
    console.log(
      `| ${k} | ${m.toFixed(0)} ms | ${((m / KEYS) * 1000).toFixed(1)} ms | ${(m / base).toFixed(2)}x | ${median(r.stall).toFixed(0)} ms (max ${Math.max(...r.stall).toFixed(0)}) |`,
    );
  }
}

function migrateFigures(): void {
  const dir = mkdtempSync(join(tmpdir(), 'npl-bench-limits-'));
  try {
    console.log('\nnpl-lb migrate ako <values.yaml>, median of 3 (whole process, Node start included):');
    console.log('| size | time | per MB | exit |');
    console.log('| --- | ---: | ---: | ---: |');
    for (const mb of [1, 2.5, 10]) {
      const lines = ['AKOSettings:', '  clusterName: bench', '  cniPlugin: calico', 'extra:'];
      let size = lines.join('\n').length;
      for (let i = 0; size < mb * 1024 * 1024; i++) {
        const l = `  key${i}: "some value ${i} of the values file"`;
        lines.push(l);
        size += l.length + 1;
      }
      const file = join(dir, `values-${mb}.yaml`);
      writeFileSync(file, `${lines.join('\n')}\n`);
      const times: number[] = [];
      let code = 0;
      for (let i = 0; i < 3; i++) {
        const t0 = performance.now();
        const r = spawnSync(
          process.execPath,
          ['--import', 'tsx', 'src/main/cli.ts', 'migrate', 'ako', file],
          { cwd: ROOT, stdio: ['ignore', 'ignore', 'pipe'], timeout: 120_000 },
        );
        times.push(performance.now() - t0);
        code = r.status ?? -1;
      }
      const m = median(times);
      console.log(`| ${mb} MB | ${(m / 1000).toFixed(2)} s | ${(m / 1000 / mb).toFixed(2)} s | ${code} |`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

await sandboxFigures();
migrateFigures();
clearTimeout(deadline);
