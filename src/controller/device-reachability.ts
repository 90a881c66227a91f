/**
 * Whether the load balancer answers, as a circuit breaker: a pass whose every write failed because
 * the device did not answer (or whose read of the device failed) opens it; while open, no pass
 * writes and one cheap read (the adapter's `probe()`, else `observe()`) every `probeMs` asks whether
 * the device is back; the first answer closes it and a full pass runs at once. While closed and idle
 * the same read runs every `idleProbeMs`, so a device that died with nothing pending is noticed too;
 * that read opens the breaker only when it fails twice in a row (a slow device that drops one
 * connection is not a dead one).
 * Each change of state is a metric, a log line and an Event on the controller's own Pod (where the
 * vendors' controllers put device-wide Events).
 */
import type { ApplyResult, LoadBalancerAdapter } from '../adapter/contract.ts';
import type { AdapterErrorCode } from '../adapter/errors.ts';
import { EventReasons } from '../kube/event-reasons.ts';
import type { EventSink, EventTarget } from '../kube/events.ts';
import { errorMessage } from '../runtime/errors.ts';
import type { Logger } from '../runtime/logger.ts';

/** Codes that say the device did not answer (not that it refused one object). */
const UNREACHABLE: ReadonlySet<AdapterErrorCode> = new Set(['Unavailable', 'SocketFailed', 'StartFailed']);

/** Whether a pass's results say the device did not answer: something failed that way, nothing went. */
export function deviceDown(applied: readonly ApplyResult[]): string | undefined {
  let why: string | undefined;
  for (const r of applied) {
    if (r.ok) return undefined;
    const code = r.error?.code;
    if (code && UNREACHABLE.has(code)) why ??= `${code}: ${r.error?.message ?? ''}`;
  }
  return why;
}

export interface ReachabilityState {
  reachable: boolean;
  /** When it last changed (ISO 8601). */
  since: string;
  /** Why the device is taken as unreachable. */
  error?: string;
  /** Reads of the device made to see whether it answers, since start. */
  probes: number;
}

export interface DeviceReachabilityDeps {
  adapter: LoadBalancerAdapter;
  events: EventSink;
  log: Logger;
  /** The controller's own Pod, where device-wide Events go; logged only when unknown. */
  self?: EventTarget | undefined;
  /** Between two reads while the device is down (default 1 s: recovery is seen within it). */
  probeMs?: number;
  /** Between two reads while it is up and nothing was written (default 5 s; 0: never). */
  idleProbeMs?: number;
  /** Told when the device answers again: a full pass should run. */
  onRecovered: () => void;
  /** Told at each change, for the metric. */
  onChange?: (reachable: boolean) => void;
}

export class DeviceReachability {
  private state: ReachabilityState = { reachable: true, since: new Date().toISOString(), probes: 0 };
  private timer: NodeJS.Timeout | undefined;
  private probing: Promise<void> | undefined;
  private stopped = true;
  /** When the device last answered anything (a pass that wrote, a probe). */
  private lastAnswer = Date.now();

  constructor(private readonly d: DeviceReachabilityDeps) {}

  get reachable(): boolean {
    return this.state.reachable;
  }

  snapshot(): ReachabilityState {
    return { ...this.state };
  }

  start(): void {
    this.stopped = false;
    this.d.onChange?.(true);
    this.schedule();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.probing;
  }

  /** The device answered (a write went through). */
  answered(): void {
    this.lastAnswer = Date.now();
    if (!this.state.reachable) this.up();
  }

  /** The device did not answer: stop writing, probe until it does. */
  failed(why: string): void {
    if (!this.state.reachable) return;
    this.state = { reachable: false, since: new Date().toISOString(), error: why, probes: this.state.probes };
    this.d.log.warn({ err: why }, 'the load balancer does not answer: writes held, probing it');
    this.d.onChange?.(false);
    this.tell('Warning', EventReasons.LoadBalancerUnreachable, `the load balancer does not answer: ${why}`);
    this.schedule();
  }

  private up(): void {
    const downFor = Date.now() - Date.parse(this.state.since);
    this.state = { reachable: true, since: new Date().toISOString(), probes: this.state.probes };
    this.d.log.info({ downMs: downFor }, 'the load balancer answers again');
    this.d.onChange?.(true);
    this.tell(
      'Normal',
      EventReasons.LoadBalancerReachable,
      `the load balancer answers again after ${Math.round(downFor / 1000)} s`,
    );
    this.schedule();
    this.d.onRecovered();
  }

  private tell(type: 'Normal' | 'Warning', reason: string, message: string): void {
    if (this.d.self) void this.d.events.record(this.d.self, type, reason, message).catch(() => undefined);
  }

  private schedule(): void {
    clearTimeout(this.timer);
    if (this.stopped) return;
    const idle = this.d.idleProbeMs ?? 5000;
    if (this.state.reachable && idle <= 0) return;
    const ms = this.state.reachable
      ? Math.max(0, this.lastAnswer + idle - Date.now())
      : (this.d.probeMs ?? 1000);
    this.timer = setTimeout(() => {
      this.probing = this.probe().finally(() => {
        this.probing = undefined;
        this.schedule();
      });
    }, ms);
    this.timer.unref();
  }

  /** One read of the device. */
  private async probe(): Promise<void> {
    // While up, a recent write already said the device answers.
    if (this.state.reachable && Date.now() - this.lastAnswer < (this.d.idleProbeMs ?? 5000)) return;
    const read = async () => {
      this.state.probes++;
      if (this.d.adapter.probe) await this.d.adapter.probe();
      else await this.d.adapter.observe();
    };
    try {
      await read();
      this.answered();
    } catch (err) {
      if (!this.state.reachable) {
        this.state.error = errorMessage(err);
        return;
      }
      // One failed read is not a dead device (a slow one drops a connection now and then, and
      // the adapters' reads already tried a fresh one): the breaker opens when a second read,
      // at once, fails too.
      try {
        await read();
        this.answered();
      } catch (again) {
        if (this.state.reachable) this.failed(errorMessage(again));
      }
    }
  }
}
