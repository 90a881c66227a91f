/**
 * The sweep's read of the device behind the passes (LbReconciler.readBehind): changes go on
 * planning and applying against the state kept meanwhile, so a change never waits for a whole read
 * of the device. What passes applied while the read was out goes on top of it (observed-cache.ts
 * `overlay`). A write issued before the read began and answered while it was out may or may not be
 * in it (and someone may have changed that object after it): that read is not taken and another
 * is made, the third taken. A retryable failure meanwhile leaves the device unknown: the next pass
 * reads it. Each write is numbered as it is issued, so a pass can tell whether the read in place
 * began before its write.
 */
import type { ApplyResult } from '../adapter/contract.ts';
import type { ObservedByName } from '../plan/diff.ts';
import { overlay } from './observed-cache.ts';

export interface ReadBehindDeps {
  /** A whole read of the device, by name. */
  read: () => Promise<ObservedByName>;
  /** The invalidations so far (one meanwhile wants a read of its own: this one is dropped). */
  generation: () => number;
  /** Reads the device in the next pass instead (the kept state dropped). */
  invalidate: () => void;
  /** The read, with what was applied since on top, is the state kept from now on. */
  install: (read: ObservedByName) => void;
  /** Reading failed (the device may be down). */
  onReadFailed?: (err: unknown) => void;
  /**
   * A read is in place, or dropped: a whole pass should run. `readCpuMs`: the process's CPU over
   * the sweep's reads, from the first one's start to the last one's end (work beside them
   * included): what the sweep costs before its whole pass.
   */
  onObserved?: (readCpuMs: number) => void;
  /** The process's CPU so far, in ms (default: process.cpuUsage()). */
  cpuMs?: () => number;
}

const processCpuMs = (): number => {
  const u = process.cpuUsage();
  return (u.user + u.system) / 1000;
};

/** A read out: the generation and last write issued when it began, what was applied since. */
interface Behind {
  generation: number;
  since: number;
  applied: ApplyResult[];
  /** A write issued before the read began answered while it was out. */
  straddled: boolean;
  /** A retryable failure meanwhile: where it left the device is unknown. */
  lost: boolean;
  /** Another read was asked for while this one was out. */
  again: boolean;
  /** The process's CPU when the sweep's first read began (ms). */
  cpu0: number;
}

export class ReadBehind {
  /** Writes issued so far (each apply call one). */
  private issued = 0;
  /** The last write issued before the state kept was read (behind the passes or in one). */
  private since = 0;
  private behind: Behind | undefined;
  private reading: Promise<void> | undefined;
  /** The process's CPU so far (ms). */
  private readonly cpuMs: () => number;

  constructor(private readonly d: ReadBehindDeps) {
    this.cpuMs = d.cpuMs ?? processCpuMs;
  }

  /** A read behind the passes; one already out is followed by another (it may predate the ask). */
  start(): void {
    if (this.behind) this.behind.again = true;
    else this.readOnce(0, this.cpuMs());
  }

  /** Numbers a write as it is issued. */
  issue(): number {
    return ++this.issued;
  }

  /** The last write's number (a pass that wrote nothing). */
  get last(): number {
    return this.issued;
  }

  /** A read made in a pass is the state kept; `since`: the last write issued when it began. */
  taken(since: number): void {
    this.since = since;
  }

  /** Whether write `issued` was issued after the state kept was read (it can go on top of it). */
  after(issued: number): boolean {
    return issued > this.since;
  }

  /** Write `issued` answered: what a read out makes of it. */
  answered(issued: number, applied: readonly ApplyResult[]): void {
    const b = this.behind;
    if (!b) return;
    if (issued <= b.since) b.straddled = true;
    else b.applied.push(...applied);
    if (applied.some((r) => !r.ok && !r.error?.terminal)) b.lost = true;
  }

  /** Resolves once no read is out (the sweep stopped first: at shutdown). */
  async done(): Promise<void> {
    while (this.reading) await this.reading;
  }

  /**
   * One read; `tries`: reads made for this sweep (a straddling write asks another; the third is
   * taken); `cpu0`: the process's CPU when the sweep's first read began.
   */
  private readOnce(tries: number, cpu0: number): void {
    const b: Behind = {
      cpu0,
      generation: this.d.generation(),
      since: this.issued,
      applied: [],
      straddled: false,
      lost: false,
      again: false,
    };
    this.behind = b;
    this.reading = (async () => {
      let next = false;
      try {
        const read = await this.d.read();
        if (b.generation !== this.d.generation()) return;
        if (b.lost) {
          this.d.invalidate();
          return;
        }
        next = b.again || (b.straddled && tries < 2);
        if (next) return;
        overlay(read, b.applied);
        this.since = b.since;
        this.d.install(read);
      } catch (err) {
        this.d.onReadFailed?.(err);
      } finally {
        this.behind = undefined;
        if (next) this.readOnce(b.again ? 0 : tries + 1, b.cpu0);
        else {
          this.reading = undefined;
          this.d.onObserved?.(this.cpuMs() - b.cpu0);
        }
      }
    })();
  }
}
