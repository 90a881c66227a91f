/**
 * core/v1 Events and events.k8s.io/v1 Events are one stored object with two shapes, as in the real
 * server. The sandbox stores the core shape and converts at the events.k8s.io boundary.
 */
import type { JsonObject } from './openapi.ts';

/** [core field, events.k8s.io field] */
const FIELD_MAP: [string, string][] = [
  ['involvedObject', 'regarding'],
  ['related', 'related'],
  ['message', 'note'],
  ['reason', 'reason'],
  ['type', 'type'],
  ['action', 'action'],
  ['eventTime', 'eventTime'],
  ['reportingComponent', 'reportingController'],
  ['reportingInstance', 'reportingInstance'],
  ['source', 'deprecatedSource'],
  ['firstTimestamp', 'deprecatedFirstTimestamp'],
  ['lastTimestamp', 'deprecatedLastTimestamp'],
  ['count', 'deprecatedCount'],
  ['series', 'series'],
];

function move(from: JsonObject, to: JsonObject, pairs: [string, string][]): void {
  for (const [a, b] of pairs) if (from[a] !== undefined) to[b] = from[a];
}

export function coreToEventsV1(core: JsonObject): JsonObject {
  const out: JsonObject = { kind: 'Event', apiVersion: 'events.k8s.io/v1', metadata: core.metadata ?? {} };
  move(core, out, FIELD_MAP);
  return out;
}

export function eventsV1ToCore(ev: JsonObject): JsonObject {
  const out: JsonObject = { kind: 'Event', apiVersion: 'v1', metadata: ev.metadata ?? {} };
  move(
    ev,
    out,
    FIELD_MAP.map(([a, b]) => [b, a]),
  );
  return out;
}
