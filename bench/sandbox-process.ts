/**
 * Benchmarks run the sandbox as its own process, as an API server would be; this starts it on a
 * free loopback port and returns its URL.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const ROOT = fileURLToPath(new URL('../', import.meta.url));

export async function startSandboxProcess(
  args: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const child = spawn(
    process.execPath,
    // A node port range wide enough for 5,000 LoadBalancer Services and more (the default
    // 30000-32767 holds 2,768 ports; its exhaustion is a 422, as on a real API server).
    [
      '--import',
      'tsx',
      'src/main/cli.ts',
      'sandbox',
      '--port',
      '0',
      '--service-node-port-range',
      '20000-60000',
      ...args,
    ],
    {
      cwd: ROOT,
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  const url = await new Promise<string>((resolve, reject) => {
    let out = '';
    child.stdout!.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /listening on (http:\/\/\S+)/.exec(out);
      if (m) resolve(m[1]!);
    });
    child.once('exit', () => reject(new Error(`sandbox exited: ${out}`)));
  });
  // A benchmark that fails before its own clean-up must not leave the sandbox running.
  const stop = () => void (child.exitCode === null && child.kill('SIGTERM'));
  process.once('exit', stop);
  child.once('exit', () => process.off('exit', stop));
  return { url, child };
}
