/**
 * The memory a process gets as the chart deploys it: the controller's container limit
 * (`controller.resources.limits.memory` in the chart's values), which Node reads at start
 * (`process.constrainedMemory()`) and sizes V8's heap by (a quarter of it, times two on 64-bit:
 * 256 MiB of old space in the default 512 MiB). On a bench machine with 24 GiB the same process
 * gets a 4 GiB heap, which V8 lets grow up to four times its live data before collecting: a
 * measure of memory there says nothing about the Pod.
 *
 * Where it can (root, a writable memory cgroup, v1 or v2), the process runs in a cgroup of its own
 * with that limit, so the limit is enforced too (the process is killed if it goes over, and the
 * bench fails). Elsewhere V8 is given the heap Node would size from the limit, and the bench says so.
 */
import { existsSync, mkdirSync, readFileSync, rmdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { load as loadYaml } from 'js-yaml';
import { z } from 'zod';

const VALUES = 'deploy/helm/npl-lb/values.yaml';

const quantity = z
  .string()
  .regex(/^\d+(Mi|Gi)$/, 'a memory quantity in Mi or Gi')
  .transform((q) => Number.parseInt(q, 10) * (q.endsWith('Gi') ? 1024 : 1));

/** The controller's memory limit in MiB, as the chart's values.yaml sets it. */
export function chartControllerMemoryMiB(valuesPath = VALUES): number {
  const values = z
    .object({ controller: z.object({ resources: z.object({ limits: z.object({ memory: quantity }) }) }) })
    .parse(loadYaml(readFileSync(valuesPath, 'utf8')));
  return values.controller.resources.limits.memory;
}

/** The old space Node 20 gives V8 in a container of `limitMiB` (V8's HeapSizeFromPhysicalMemory). */
export const oldSpaceForLimit = (limitMiB: number): number => Math.max(256, (limitMiB / 4) * 2);

/** How to start a process within the limit: a command prefix, and what to undo afterwards. */
export interface Contained {
  /** Prepended to the node command line: a shell that joins the cgroup, or nothing. */
  wrap: (cmd: string, args: string[]) => { cmd: string; args: string[] };
  /** Node flags (the heap size, where no cgroup could be made). */
  nodeFlags: string[];
  how: string;
  /** Removes the cgroup once the process has exited. */
  release: () => void;
}

function memoryCgroupDir(): string | undefined {
  let lines: string[];
  try {
    lines = readFileSync('/proc/self/cgroup', 'utf8').trim().split('\n');
  } catch {
    return undefined;
  }
  const v1 = lines.map((l) => l.split(':')).find((p) => p[1]?.split(',').includes('memory'));
  if (v1 && existsSync('/sys/fs/cgroup/memory')) return join('/sys/fs/cgroup/memory', v1[2] ?? '/');
  const v2 = lines.map((l) => l.split(':')).find((p) => p[0] === '0' && p[1] === '');
  if (v2 && existsSync('/sys/fs/cgroup/cgroup.controllers')) return join('/sys/fs/cgroup', v2[2] ?? '/');
  return undefined;
}

export function contain(limitMiB: number): Contained {
  const bytes = String(limitMiB * 1024 * 1024);
  const parent = memoryCgroupDir();
  if (parent) {
    const dir = join(parent, `npl-lb-bench-${process.pid}`);
    try {
      mkdirSync(dir);
      const limitFile = existsSync(join(dir, 'memory.max')) ? 'memory.max' : 'memory.limit_in_bytes';
      writeFileSync(join(dir, limitFile), bytes);
      const procs = join(dir, 'cgroup.procs');
      return {
        wrap: (cmd, args) => ({
          cmd: '/bin/sh',
          args: ['-c', `echo $$ > '${procs}' && exec "$@"`, 'sh', cmd, ...args],
        }),
        nodeFlags: [],
        how: `in a memory cgroup limited to ${limitMiB} MiB (the chart's controller limit)`,
        release: () => {
          try {
            rmdirSync(dir);
          } catch {
            // still has a process: the caller releases after exit
          }
        },
      };
    } catch {
      try {
        rmdirSync(dir);
      } catch {
        // never made
      }
    }
  }
  return {
    wrap: (cmd, args) => ({ cmd, args }),
    nodeFlags: [`--max-old-space-size=${oldSpaceForLimit(limitMiB)}`],
    how: `with the heap Node sizes from a ${limitMiB} MiB limit (no writable memory cgroup here; the limit itself is not enforced)`,
    release: () => {},
  };
}
