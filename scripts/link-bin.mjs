// Run by `npm install` (the prepare script) in a clone: links node_modules/.bin/npl-lb to the
// launcher, so that `npx npl-lb <command>` runs this checkout (built or not; bin/npl-lb.mjs).
import { chmodSync, existsSync, mkdirSync, rmSync, symlinkSync } from 'node:fs';
import { fileURLToPath, URL } from 'node:url';

const bin = fileURLToPath(new URL('../node_modules/.bin/', import.meta.url));
if (existsSync(fileURLToPath(new URL('../node_modules/', import.meta.url)))) {
  mkdirSync(bin, { recursive: true });
  rmSync(`${bin}npl-lb`, { force: true });
  symlinkSync('../../bin/npl-lb.mjs', `${bin}npl-lb`);
  chmodSync(fileURLToPath(new URL('../bin/npl-lb.mjs', import.meta.url)), 0o755);
}
