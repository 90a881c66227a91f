import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const run = promisify(execFile);

it('npm run build compiles to dist/ and the built npl-lb runs', async () => {
  await run('npm', ['run', 'build'], { cwd: ROOT, timeout: 180_000 });
  const { stdout } = await run(process.execPath, ['dist/src/main/cli.js', 'sandbox', '--help'], {
    cwd: ROOT,
  });
  assert.match(stdout, /Usage: npl-lb sandbox/);
  const { OpenApi } = (await import(`${ROOT}dist/src/sandbox/openapi.js`)) as {
    OpenApi: new () => { v3Keys(): string[] };
  };
  assert.ok(new OpenApi().v3Keys().includes('api/v1'), 'the bundled OpenAPI document ships in dist/');
});
