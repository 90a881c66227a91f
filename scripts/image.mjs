// `npm run image [-- --with-haproxy] [--tag <tag>] [--engine docker|podman]`: builds the image
// from the repository's Dockerfile with the first container engine that answers (docker, then
// podman), tagged ghcr.io/npl-lb/npl-lb:<package.json version> (and `-haproxy` with HAProxy). The
// image carries its SBOM at /usr/share/npl-lb/sbom.cdx.json. Without an engine it says so and
// exits 2: nothing is half built.
import { spawnSync } from 'node:child_process';
import { readFileSync } from 'node:fs';
import process from 'node:process';
import { fileURLToPath, URL } from 'node:url';
import { parseArgs } from 'node:util';

const ROOT = fileURLToPath(new URL('..', import.meta.url));
const { version } = JSON.parse(readFileSync(new URL('../package.json', import.meta.url), 'utf8'));

let flags;
try {
  flags = parseArgs({
    options: {
      'with-haproxy': { type: 'boolean', default: false },
      tag: { type: 'string' },
      engine: { type: 'string' },
      help: { type: 'boolean', default: false },
    },
  }).values;
} catch (err) {
  process.stderr.write(`image: ${err.message}\n`);
  process.exit(2);
}
if (flags.help) {
  process.stdout.write(
    'Usage: npm run image -- [--with-haproxy] [--tag <image:tag>] [--engine docker|podman]\n',
  );
  process.exit(0);
}
if (flags.engine !== undefined && !['docker', 'podman'].includes(flags.engine)) {
  process.stderr.write(`image: --engine must be docker or podman, not ${JSON.stringify(flags.engine)}\n`);
  process.exit(2);
}

/** The first engine whose daemon (or podman itself) answers. */
function findEngine() {
  const tried = [];
  for (const engine of flags.engine ? [flags.engine] : ['docker', 'podman']) {
    const r = spawnSync(engine, ['info'], { stdio: ['ignore', 'ignore', 'pipe'], timeout: 20_000 });
    if (r.status === 0) return { engine, tried };
    const why =
      r.error?.code === 'ENOENT'
        ? 'not installed'
        : (r.stderr?.toString().trim().split('\n').pop() ?? `exit ${r.status}`);
    tried.push(`${engine}: ${why}`);
  }
  return { engine: undefined, tried };
}

const { engine, tried } = findEngine();
if (!engine) {
  process.stderr.write(
    `image: no container engine answers (${tried.join('; ')}); install docker or podman, or build the Dockerfile elsewhere\n`,
  );
  process.exit(2);
}
const tag = flags.tag ?? `ghcr.io/npl-lb/npl-lb:${version}${flags['with-haproxy'] ? '-haproxy' : ''}`;
const args = [
  'build',
  '--build-arg',
  `WITH_HAPROXY=${flags['with-haproxy']}`,
  '--label',
  `org.opencontainers.image.version=${version}`,
  '-t',
  tag,
  ROOT,
];
process.stdout.write(`image: ${engine} ${args.join(' ')}\n`);
const built = spawnSync(engine, args, { stdio: 'inherit' });
if (built.status !== 0) {
  process.stderr.write(`image: ${engine} build failed (exit ${built.status ?? built.signal})\n`);
  process.exit(1);
}
process.stdout.write(`image: built ${tag} (SBOM inside at /usr/share/npl-lb/sbom.cdx.json)\n`);
