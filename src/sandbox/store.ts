/**
 * The sandbox's etcd: objects by storage key, one cluster-wide monotonically increasing
 * resourceVersion, and a bounded history of changes that watches replay from.
 */
import type { JsonObject } from './openapi.ts';
import { expired } from './status.ts';

export type EventType = 'ADDED' | 'MODIFIED' | 'DELETED';

export interface StoredObject {
  readonly obj: JsonObject;
  /** The object's JSON text, made once per write and reused by every list and watch. */
  readonly json: string;
}

export interface StoreEvent {
  readonly type: EventType;
  readonly rv: number;
  readonly storage: string;
  readonly namespace: string;
  readonly name: string;
  readonly current: StoredObject;
  /** The object before this change (MODIFIED and DELETED), for selector transitions. */
  readonly previous: StoredObject | undefined;
}

export type StoreListener = (ev: StoreEvent) => void;

const keyOf = (namespace: string, name: string): string => `${namespace}/${name}`;

export function metadataOf(obj: JsonObject): JsonObject {
  const m = obj.metadata;
  return typeof m === 'object' && m !== null && !Array.isArray(m) ? m : {};
}

export class Store {
  private rv: number;
  private readonly tables = new Map<string, Map<string, StoredObject>>();
  private readonly history: (StoreEvent | undefined)[];
  private head = 0;
  private count = 0;
  /** Watches asking for a resourceVersion below this one get 410 Expired. */
  private floor: number;
  private readonly listeners = new Set<StoreListener>();

  constructor(historySize = 20_000, startRV = 1) {
    this.history = new Array<StoreEvent | undefined>(historySize);
    this.rv = startRV;
    this.floor = startRV;
  }

  currentRV(): number {
    return this.rv;
  }

  get(storage: string, namespace: string, name: string): StoredObject | undefined {
    return this.tables.get(storage)?.get(keyOf(namespace, name));
  }

  /** Objects of a storage key (in one namespace, or all), sorted by namespace and name as etcd keys sort. */
  list(storage: string, namespace?: string): StoredObject[] {
    return [...this.listFrom(storage, namespace)];
  }

  /**
   * The same order, lazily, from just after the key `after` (namespace/name) when given: a page of
   * a paginated list costs its page, not the whole table (the keys are sorted once per change of the
   * table, not once per page).
   */
  *listFrom(storage: string, namespace?: string, after?: string): Generator<StoredObject> {
    const table = this.tables.get(storage);
    if (!table) return;
    let keys = this.sorted.get(storage);
    if (!keys) this.sorted.set(storage, (keys = [...table.keys()].sort()));
    const prefix = namespace === undefined ? '' : `${namespace}/`;
    // The first key past both the prefix's start and `after`.
    const from = after !== undefined && after >= prefix ? after : undefined;
    let lo = 0;
    let hi = keys.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const k = keys[mid]!;
      if (from !== undefined ? k <= from : k < prefix) lo = mid + 1;
      else hi = mid;
    }
    for (let i = lo; i < keys.length; i++) {
      const k = keys[i]!;
      if (!k.startsWith(prefix)) return;
      const v = table.get(k);
      if (v) yield v;
    }
  }

  /** Sorted keys per storage key, dropped whenever its table changes. */
  private readonly sorted = new Map<string, string[]>();

  countOf(storage: string): number {
    return this.tables.get(storage)?.size ?? 0;
  }

  /**
   * Writes `obj` (which the caller hands over and must not touch again) under a new resourceVersion,
   * records the change and tells the watchers.
   */
  commit(storage: string, type: EventType, obj: JsonObject): StoredObject {
    const meta = metadataOf(obj);
    const namespace = typeof meta.namespace === 'string' ? meta.namespace : '';
    const name = String(meta.name ?? '');
    const rv = ++this.rv;
    meta.resourceVersion = String(rv);
    obj.metadata = meta;
    const current: StoredObject = { obj, json: JSON.stringify(obj) };
    let table = this.tables.get(storage);
    if (!table) {
      table = new Map();
      this.tables.set(storage, table);
    }
    const key = keyOf(namespace, name);
    const previous = table.get(key);
    if (type === 'DELETED') table.delete(key);
    else table.set(key, current);
    if (type === 'DELETED' || !previous) this.sorted.delete(storage);
    const ev: StoreEvent = { type, rv, storage, namespace, name, current, previous };
    this.record(ev);
    for (const l of this.listeners) l(ev);
    return current;
  }

  private record(ev: StoreEvent): void {
    const cap = this.history.length;
    if (cap === 0) {
      this.floor = ev.rv;
      return;
    }
    const idx = (this.head + this.count) % cap;
    if (this.count === cap) {
      const dropped = this.history[this.head];
      this.head = (this.head + 1) % cap;
      if (dropped) this.floor = dropped.rv;
    } else this.count++;
    this.history[idx] = ev;
  }

  /** Changes after `rv`, oldest first; 410 Expired when the history no longer reaches back that far. */
  since(rv: number): StoreEvent[] {
    if (rv < this.floor) throw expired(rv, this.floor);
    const out: StoreEvent[] = [];
    const cap = this.history.length;
    for (let i = 0; i < this.count; i++) {
      const ev = this.history[(this.head + i) % cap];
      if (ev && ev.rv > rv) out.push(ev);
    }
    return out;
  }

  /** Forgets all history, as an etcd compaction does: every older resourceVersion now gets 410. */
  compact(): void {
    this.history.fill(undefined);
    this.head = 0;
    this.count = 0;
    this.floor = this.rv;
  }

  subscribe(l: StoreListener): () => void {
    this.listeners.add(l);
    return () => this.listeners.delete(l);
  }
}
