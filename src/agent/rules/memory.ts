/**
 * A backend that keeps its rules in memory: the reference for tests of the NPL controller, with the
 * same batch/incremental contract as the real ones and a log of the calls made.
 */
import type { Mapping } from '../port-table.ts';
import { type ForwardingBackend, forwarded } from './types.ts';

export interface MemoryRule {
  protocol: string;
  family: string;
  nodePort: number;
  podIP: string;
  podPort: number;
}

export class MemoryBackend implements ForwardingBackend {
  readonly name = 'memory';
  readonly bindsWildcard = false;
  readonly rules = new Map<string, MemoryRule>();
  readonly calls: string[] = [];

  private static key(m: Pick<Mapping, 'protocol' | 'family' | 'nodePort'>): string {
    return `${m.protocol}/${m.family}/${m.nodePort}`;
  }

  private static rule(m: Mapping): MemoryRule {
    return {
      protocol: m.protocol,
      family: m.family,
      nodePort: m.nodePort,
      podIP: m.podIP,
      podPort: m.podPort,
    };
  }

  async start(): Promise<void> {
    this.calls.push('start');
  }

  async sync(mappings: Mapping[]): Promise<void> {
    this.calls.push(`sync ${forwarded(mappings).length}`);
    this.rules.clear();
    for (const m of forwarded(mappings)) this.rules.set(MemoryBackend.key(m), MemoryBackend.rule(m));
  }

  async add(m: Mapping): Promise<void> {
    if (m.hostPort) return;
    this.calls.push(`add ${MemoryBackend.key(m)}`);
    this.rules.set(MemoryBackend.key(m), MemoryBackend.rule(m));
  }

  async remove(m: Mapping): Promise<void> {
    if (m.hostPort) return;
    this.calls.push(`remove ${MemoryBackend.key(m)}`);
    this.rules.delete(MemoryBackend.key(m));
  }

  async stop(): Promise<void> {
    this.calls.push('stop');
  }

  async cleanup(): Promise<void> {
    this.rules.clear();
  }
}
