/**
 * Copies the Kubernetes protobuf definitions the sandbox decodes (`generated.proto` of the API
 * groups it serves, and the apimachinery types they import) from git checkouts of kubernetes/api
 * and kubernetes/apimachinery at a release tag into src/sandbox/proto/, under their import paths.
 *   npx tsx scripts/extract-protos.ts <kubernetes/api git dir> <kubernetes/apimachinery git dir> [tag]
 */
import { execFileSync } from 'node:child_process';
import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { PROTO_FILES } from '../src/sandbox/protobuf-files.ts';

const [api, machinery, tag = 'v0.35.7'] = process.argv.slice(2);
if (!api || !machinery)
  throw new Error(
    'usage: extract-protos.ts <kubernetes/api git dir> <kubernetes/apimachinery git dir> [tag]',
  );
const out = fileURLToPath(new URL('../src/sandbox/proto/', import.meta.url));
for (const file of PROTO_FILES) {
  const [repo, path] = file.startsWith('k8s.io/api/')
    ? [api, file.slice('k8s.io/api/'.length)]
    : [machinery, file.slice('k8s.io/apimachinery/'.length)];
  const text = execFileSync('git', ['--git-dir', repo, 'show', `${tag}:${path}`], { encoding: 'utf8' });
  mkdirSync(dirname(join(out, file)), { recursive: true });
  writeFileSync(join(out, file), text);
  console.log(`${file}: ${text.length} bytes`);
}
