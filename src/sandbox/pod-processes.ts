/**
 * The containers of the Pods the sandbox's kubelet runs for real: one process per container
 * (pod-images.ts says which script), on the Pod's loopback addresses, probed as the kubelet probes
 * (the readiness probe's httpGet or tcpSocket, else a TCP connect to its first port; unready after
 * `failureThreshold` failures in a row and ready again after `successThreshold` answers, as the
 * kubelet counts them, so one probe lost to a busy machine does not take a Pod out), restarted
 * with a growing back-off when it exits on its own, and stopped with SIGTERM, then SIGKILL once the
 * time left of the grace period is spent. Every process is started with an IPC channel, so it
 * exits by itself when the sandbox goes, however it goes.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { request } from 'node:http';
import { connect } from 'node:net';
import { lagTolerantTimeout } from '../runtime/lag-tolerant-timeout.ts';
import { podImage } from './pod-images.ts';
import { keepLog, type LogLine } from './pod-logs.ts';
import type { JsonObject } from './openapi.ts';
import { arr, obj } from './workload-status.ts';

/** What the kubelet reports of a Pod's containers. */
export interface ContainersState {
  ready: boolean;
  restartCount: number;
  /** When the current process started (ISO, seconds). */
  startedAt: string;
}

interface Probe {
  kind: 'http' | 'tcp';
  port: number;
  path: string;
  periodMs: number;
  timeoutMs: number;
  initialDelayMs: number;
  /** Failures in a row before the container is unready (the kubelet's default 3). */
  failureThreshold: number;
  /** Answers in a row before an unready container is ready again (default 1). */
  successThreshold: number;
}

interface Container extends ContainerSpec {
  child?: ChildProcess;
  /** What it wrote, oldest first, across restarts (`kubectl logs`). */
  log: LogLine[];
  /** The probes' verdict so far, and the results in a row that lead to it or away from it. */
  ready: boolean;
  fails: number;
  oks: number;
}

interface Entry {
  ips: string[];
  volumes: () => Map<string, string>;
  containers: Container[];
  state: ContainersState;
  onChange: (s: ContainersState) => void;
  timer?: NodeJS.Timeout;
  restart?: NodeJS.Timeout;
  backoffMs: number;
  stopping: boolean;
}

const nowText = () => new Date().toISOString().replace(/\.\d{3}Z$/, 'Z');

/** A container port by number or by name (undefined: the container has no such port). */
function portOf(c: JsonObject, p: unknown): number | undefined {
  if (typeof p === 'number' && Number.isInteger(p) && p > 0 && p < 65536) return p;
  const byName = arr(c.ports).find((x) => x.name === p)?.containerPort;
  return typeof byName === 'number' ? byName : undefined;
}

const seconds = (v: unknown, dflt: number) =>
  typeof v === 'number' && Number.isFinite(v) && v >= 0 ? v : dflt;

/** A `valueFrom.fieldRef` as the kubelet resolves it (the downward API's common fields). */
function fieldValue(pod: JsonObject, path: string, ips: string[]): string | undefined {
  const meta = obj(pod.metadata);
  const spec = obj(pod.spec);
  const label = /^metadata\.(labels|annotations)\['([^']+)'\]$/.exec(path);
  if (label) {
    const v = obj(meta[label[1]!])[label[2]!];
    return typeof v === 'string' ? v : '';
  }
  const fields: Record<string, unknown> = {
    'metadata.name': meta.name,
    'metadata.namespace': meta.namespace,
    'metadata.uid': meta.uid,
    'spec.nodeName': spec.nodeName,
    'spec.serviceAccountName': spec.serviceAccountName ?? 'default',
    'status.podIP': ips[0],
    'status.podIPs': ips.join(','),
  };
  const v = fields[path];
  return typeof v === 'string' ? v : undefined;
}

interface ContainerSpec {
  name: string;
  script: string;
  env: Record<string, string>;
  mounts: { name: string; mountPath: string }[];
  probe: Probe;
}

/** Whether every container of the Pod is one the catalogue runs (undefined otherwise). */
export function runnableContainers(pod: JsonObject, ips: string[] = []): ContainerSpec[] | undefined {
  const out = [];
  const containers = arr(obj(pod.spec).containers);
  if (containers.length === 0) return undefined;
  for (const c of containers) {
    const image = podImage(String(c.image ?? ''));
    if (!image) return undefined;
    const env: Record<string, string> = {};
    // Literal values, and the downward API's fields (a Secret or ConfigMap key is not resolved).
    for (const e of arr(c.env)) {
      // A name that could steer the runtime that runs the image (NODE_OPTIONS loads code) is not
      // passed on: the Pod's spec is input, never an instruction to this process's tools.
      if (typeof e.name !== 'string' || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(e.name) || /^NODE_/i.test(e.name))
        continue;
      if (typeof e.value === 'string') env[e.name] = e.value;
      const path = obj(obj(e.valueFrom).fieldRef).fieldPath;
      const v = typeof path === 'string' ? fieldValue(pod, path, ips) : undefined;
      if (v !== undefined) env[e.name] = v;
    }
    const first = arr(c.ports)[0]?.containerPort;
    const port = env[image.portEnv]
      ? Number(env[image.portEnv])
      : typeof first === 'number'
        ? first
        : image.defaultPort;
    env[image.portEnv] = String(port);
    const rp = obj(c.readinessProbe);
    const http = obj(rp.httpGet);
    const tcp = obj(rp.tcpSocket);
    const probePort = portOf(c, rp.httpGet ? http.port : rp.tcpSocket ? tcp.port : port) ?? port;
    out.push({
      name: String(c.name ?? 'main'),
      script: image.script,
      env,
      mounts: arr(c.volumeMounts).flatMap((m) =>
        typeof m.name === 'string' && typeof m.mountPath === 'string'
          ? [{ name: m.name, mountPath: m.mountPath }]
          : [],
      ),
      probe: {
        kind: rp.httpGet ? ('http' as const) : ('tcp' as const),
        port: probePort,
        path: typeof http.path === 'string' && http.path.startsWith('/') ? http.path : '/',
        // A cluster's default period is 10 s; the sandbox looks every second unless told.
        periodMs: seconds(rp.periodSeconds, 1) * 1000,
        timeoutMs: seconds(rp.timeoutSeconds, 1) * 1000,
        initialDelayMs: seconds(rp.initialDelaySeconds, 0) * 1000,
        failureThreshold: Math.max(1, seconds(rp.failureThreshold, 3)),
        successThreshold: Math.max(1, seconds(rp.successThreshold, 1)),
      },
    });
  }
  return out;
}

/** One probe of a container: whether it answered in time (HTTP: a status of 200-399). */
function probeOnce(ip: string, p: Probe): Promise<boolean> {
  return new Promise((resolve) => {
    let settled = false;
    const done = (ok: boolean) => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      resolve(ok);
    };
    // The verdict of a timeout waits for the I/O already done (lagTolerantTimeout): a process
    // busy past the timeout has often had its answer waiting all along.
    const timer = lagTolerantTimeout(() => {
      if (settled) return;
      sock.destroy();
      done(false);
    }, p.timeoutMs);
    const sock =
      p.kind === 'tcp'
        ? connect({ host: ip, port: p.port }, () => {
            sock.destroy();
            done(true);
          })
        : request(
            {
              host: ip,
              port: p.port,
              path: p.path,
              agent: false,
              headers: { 'user-agent': 'kube-probe/1.35' },
            },
            (res) => {
              res.resume();
              done((res.statusCode ?? 0) >= 200 && (res.statusCode ?? 0) < 400);
            },
          )
            .end()
            .on('socket', (s) => s.unref());
    sock.on('error', () => done(false));
  });
}

/**
 * One probe's result counted as the kubelet counts it: a running container turns unready after
 * `failureThreshold` failures in a row and ready after `successThreshold` answers in a row (the
 * first answer after a start makes it ready at the default of 1). A container with no process is
 * unready at once (its exit said so).
 */
export function probed(c: Pick<Container, 'child' | 'probe' | 'ready' | 'fails' | 'oks'>, ok: boolean): void {
  if (!c.child) {
    Object.assign(c, { ready: false, fails: 0, oks: 0 });
    return;
  }
  c.fails = ok ? 0 : c.fails + 1;
  c.oks = ok ? c.oks + 1 : 0;
  if (c.ready && c.fails >= c.probe.failureThreshold) c.ready = false;
  else if (!c.ready && c.oks >= c.probe.successThreshold) c.ready = true;
}

export class PodProcesses {
  private readonly pods = new Map<string, Entry>();

  /** What a running Pod's container wrote (`name` absent: its only one), or undefined. */
  logs(uid: string, name?: string): LogLine[] | undefined {
    const cs = this.pods.get(uid)?.containers;
    const c = name === undefined ? (cs?.length === 1 ? cs[0] : undefined) : cs?.find((x) => x.name === name);
    return c ? [...c.log] : undefined;
  }

  has(uid: string): boolean {
    return this.pods.has(uid);
  }

  uids(): string[] {
    return [...this.pods.keys()];
  }

  /**
   * Starts the Pod's containers on its addresses; `onChange` hears each change of what the kubelet
   * reports (ready or not, a restart). False when the catalogue does not run its images.
   */
  start(
    uid: string,
    pod: JsonObject,
    ips: string[],
    onChange: (s: ContainersState) => void,
    /** The Pod's volumes as directories, by name, made again at each start of a container. */
    volumes: () => Map<string, string> = () => new Map(),
  ): boolean {
    const containers = runnableContainers(pod, ips);
    if (!containers || ips.length === 0 || this.pods.has(uid)) return false;
    const meta = obj(pod.metadata);
    const base = {
      POD_NAME: String(meta.name ?? ''),
      NAMESPACE: String(meta.namespace ?? ''),
      NODE_NAME: String(obj(pod.spec).nodeName ?? ''),
      POD_IP: ips[0]!,
      POD_IPS: ips.join(','),
    };
    const entry: Entry = {
      ips,
      volumes,
      containers: containers.map((c) => ({
        ...c,
        env: { ...c.env, ...base },
        ready: false,
        fails: 0,
        oks: 0,
        log: [],
      })),
      state: { ready: false, restartCount: 0, startedAt: nowText() },
      onChange,
      backoffMs: 1000,
      stopping: false,
    };
    this.pods.set(uid, entry);
    for (const c of entry.containers) this.spawn(uid, entry, c);
    const delay = Math.max(...entry.containers.map((c) => c.probe.initialDelayMs));
    const period = Math.min(...entry.containers.map((c) => c.probe.periodMs));
    // The first looks come quickly (a process is up in tens of milliseconds), then every period.
    let quick = 0;
    const look = () => {
      void this.probe(entry).finally(() => {
        if (entry.stopping) return;
        entry.timer = setTimeout(look, entry.state.ready || quick++ > 20 ? period : Math.min(period, 100));
        entry.timer.unref();
      });
    };
    entry.timer = setTimeout(look, delay);
    entry.timer.unref();
    return true;
  }

  private spawn(uid: string, entry: Entry, c: Container): void {
    // The container's mounts: where in the container, which directory here (no mount namespace).
    const dirs = c.mounts.length > 0 ? entry.volumes() : new Map<string, string>();
    const mounts = c.mounts.flatMap((m) =>
      dirs.has(m.name) ? [{ mountPath: m.mountPath, dir: dirs.get(m.name)! }] : [],
    );
    const child = fork(c.script, [], {
      env: { PATH: process.env.PATH ?? '', ...c.env, NPL_LB_MOUNTS: JSON.stringify(mounts) },
      stdio: ['ignore', 'pipe', 'pipe', 'ipc'],
      execArgv: [],
    });
    c.child = child;
    for (const out of [child.stdout, child.stderr]) if (out) keepLog(out, c.log);
    child.once('exit', () => {
      if (c.child === child) c.child = undefined;
      if (entry.stopping || this.pods.get(uid) !== entry) return;
      // Exited on its own: not ready, started again after a back-off (doubling to 10 s).
      Object.assign(c, { ready: false, fails: 0, oks: 0 });
      this.report(entry, { ...entry.state, ready: false });
      entry.restart = setTimeout(() => {
        if (entry.stopping) return;
        entry.backoffMs = Math.min(entry.backoffMs * 2, 10_000);
        this.spawn(uid, entry, c);
        this.report(entry, {
          ...entry.state,
          restartCount: entry.state.restartCount + 1,
          startedAt: nowText(),
        });
      }, entry.backoffMs);
      entry.restart.unref();
    });
  }

  private async probe(entry: Entry): Promise<void> {
    const results = await Promise.all(
      entry.containers.map((c) => (c.child ? probeOnce(entry.ips[0]!, c.probe) : Promise.resolve(false))),
    );
    if (entry.stopping) return;
    entry.containers.forEach((c, i) => probed(c, results[i]!));
    this.report(entry, { ...entry.state, ready: entry.containers.every((c) => c.ready) });
  }

  private report(entry: Entry, next: ContainersState): void {
    const s = entry.state;
    if (s.ready === next.ready && s.restartCount === next.restartCount && s.startedAt === next.startedAt)
      return;
    entry.state = next;
    entry.onChange(next);
  }

  /** The Pod's addresses (undefined: not running here). */
  addresses(uid: string): string[] | undefined {
    return this.pods.get(uid)?.ips;
  }

  /**
   * Stops the Pod's containers: SIGTERM, then SIGKILL after `graceMs`; resolves once every
   * process has exited.
   */
  async stop(uid: string, graceMs: number): Promise<void> {
    const entry = this.pods.get(uid);
    if (!entry) return;
    entry.stopping = true;
    clearTimeout(entry.timer);
    clearTimeout(entry.restart);
    await Promise.all(
      entry.containers.map(async (c) => {
        const child = c.child;
        if (!child || child.exitCode !== null || child.signalCode !== null) return;
        const exited = new Promise<void>((r) => child.once('exit', () => r()));
        child.kill('SIGTERM');
        const kill = setTimeout(() => child.kill('SIGKILL'), graceMs);
        await exited;
        clearTimeout(kill);
      }),
    );
    this.pods.delete(uid);
  }

  /** Every process killed at once (the sandbox stopping). */
  stopAll(): void {
    for (const entry of this.pods.values()) {
      entry.stopping = true;
      clearTimeout(entry.timer);
      clearTimeout(entry.restart);
      for (const c of entry.containers) c.child?.kill('SIGKILL');
    }
    this.pods.clear();
  }
}
