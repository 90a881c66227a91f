/**
 * The work queue of the sandbox's controllers (EndpointSlices, workloads): namespaces to look at,
 * gathered while the store changes and reconciled together on the next turn of the event loop, so
 * a burst of writes costs one pass per namespace. A pass that throws (the namespace went meanwhile,
 * or a write raced another) is dropped: the namespace's next change tries again.
 */
export class NamespaceQueue {
  private readonly pending = new Set<string>();
  private timer: NodeJS.Immediate | undefined;

  constructor(private readonly reconcile: (namespace: string) => void) {}

  add(...namespaces: string[]): void {
    for (const ns of namespaces) this.pending.add(ns);
    this.timer ??= setImmediate(() => this.flush());
  }

  stop(): void {
    if (this.timer) clearImmediate(this.timer);
    this.timer = undefined;
    this.pending.clear();
  }

  private flush(): void {
    this.timer = undefined;
    const namespaces = [...this.pending];
    this.pending.clear();
    for (const ns of namespaces) {
      try {
        this.reconcile(ns);
      } catch {
        // Tried again on the namespace's next change.
      }
    }
  }
}
