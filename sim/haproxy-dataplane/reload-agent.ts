/**
 * The simulator's reload agent, as the real API's: reloads queued and run one after another in the
 * background, each with an id whose status (`in_progress`, `succeeded`, `failed`) can be read; and
 * runtime API commands sent in bounded batches. Before a reload, servers that stay are moved
 * through the socket and (unless asked not to) the server states saved, so health and drain states
 * survive it.
 */
import { readFileSync, rmSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from '../../src/runtime/logger.ts';
import type { DpReload } from '../../adapters/haproxy/dataplane/models.ts';
import {
  adminSocket,
  configPath,
  type HaproxyProcess,
  socketCommand,
} from '../../adapters/haproxy/process.ts';

export class ReloadAgent {
  readonly reloads = new Map<string, DpReload>();
  readonly stats = { reloads: 0, runtimeCommands: 0 };
  private chain: Promise<void> = Promise.resolve();
  private seq = 0;

  constructor(
    private readonly proc: HaproxyProcess,
    private readonly workDir: string,
    private readonly logger?: Logger,
  ) {}

  /** Resolves once no reload is queued or running. */
  async idle(): Promise<void> {
    await this.chain;
  }

  /**
   * Queues a reload; `moves` go first through the socket, and with `keepState` the server states
   * (health, drain) are saved for the new worker. `checked`: the text `haproxy -c` passed; the
   * reload checks the file again unless it is still that text (a later install may have written
   * another). Returns the reload's id.
   */
  schedule(moves: string[], keepState: boolean, checked?: string): string {
    const day = new Date().toISOString().slice(0, 10);
    const id = `${day}-${++this.seq}`;
    this.reloads.set(id, { id, status: 'in_progress' });
    const stateFile = join(this.workDir, 'server-state');
    // Reloads happen one after another, in the background, as the real API's reload agent does.
    this.chain = this.chain.then(async () => {
      try {
        // Servers that stay are moved first: HAProxy takes their ports from the saved state.
        await this.runtime(moves);
        const states = keepState
          ? await socketCommand(adminSocket(this.proc.paths), 'show servers state').catch(() => '')
          : '';
        if (states.startsWith('1')) writeFileSync(stateFile, states);
        else rmSync(stateFile, { force: true });
        await this.proc.reload({ checked: checked !== undefined && this.current() === checked });
        this.stats.reloads++;
        this.reloads.set(id, { id, status: 'succeeded', reload_timestamp: Math.floor(Date.now() / 1000) });
      } catch (err) {
        this.reloads.set(id, { id, status: 'failed', response: (err as Error).message });
      }
    });
    return id;
  }

  private current(): string | undefined {
    try {
      return readFileSync(configPath(this.proc.paths), 'utf8');
    } catch {
      return undefined;
    }
  }

  /** Sends runtime commands; false when HAProxy refused one (its answer is logged). */
  async runtime(commands: string[]): Promise<boolean> {
    let ok = true;
    // Many commands per connection (`;`-separated), in bounded batches.
    for (let i = 0; i < commands.length; i += 50) {
      const batch = commands.slice(i, i + 50);
      const answer = await this.proc.runtime(batch.join(';'));
      this.stats.runtimeCommands += batch.length;
      const bad = answer
        .split('\n')
        .map((l) => l.trim())
        .filter((l) => l && !/no need to change|changed from|^$/i.test(l));
      if (bad.length > 0) {
        ok = false;
        this.logger?.warn({ commands: batch, answer: bad }, 'runtime command refused');
      }
    }
    return ok;
  }
}
