/**
 * Server-side printing: `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` gets a
 * meta.k8s.io/v1 Table with the columns the real server prints for each kind, which is what
 * `kubectl get` shows.
 */
import { columnCell } from './crd/printer.ts';
import type { PrinterColumn, ResourceType } from './kinds.ts';
import type { Json, JsonObject } from './openapi.ts';

export interface TableRequest {
  version: 'v1' | 'v1beta1';
}

interface Column {
  name: string;
  type: string;
  format?: string;
  priority?: number;
  cell: (o: Obj) => string | number | boolean | null;
}

type Obj = JsonObject & { metadata?: JsonObject; spec?: JsonObject; status?: JsonObject };

export function tableRequested(accept: string | undefined): TableRequest | undefined {
  if (!accept) return undefined;
  for (const part of accept.split(',')) {
    const params = part.split(';').map((p) => p.trim());
    if (params.includes('as=Table') && params.includes('g=meta.k8s.io')) {
      return { version: params.includes('v=v1beta1') ? 'v1beta1' : 'v1' };
    }
  }
  return undefined;
}

const arr = (v: Json | undefined): JsonObject[] =>
  Array.isArray(v)
    ? v.filter((x): x is JsonObject => typeof x === 'object' && x !== null && !Array.isArray(x))
    : [];
const obj = (v: Json | undefined): JsonObject =>
  typeof v === 'object' && v !== null && !Array.isArray(v) ? v : {};

export function age(ts: Json | undefined, now = Date.now()): string {
  if (typeof ts !== 'string') return '<unknown>';
  const s = Math.max(0, Math.floor((now - Date.parse(ts)) / 1000));
  if (s < 120) return `${s}s`;
  const m = Math.floor(s / 60);
  if (m < 10) return `${m}m${s % 60 ? `${s % 60}s` : ''}`;
  if (m < 180) return `${m}m`;
  const h = Math.floor(m / 60);
  if (h < 48) return `${h}h`;
  return `${Math.floor(h / 24)}d`;
}

const NAME: Column = { name: 'Name', type: 'string', cell: (o) => String(obj(o.metadata).name ?? '') };
const AGE: Column = { name: 'Age', type: 'string', cell: (o) => age(obj(o.metadata).creationTimestamp) };

function podStatus(o: Obj): string {
  if (obj(o.metadata).deletionTimestamp) return 'Terminating';
  const st = obj(o.status);
  for (const cs of arr(st.containerStatuses)) {
    const waiting = obj(obj(cs.state).waiting);
    if (typeof waiting.reason === 'string') return waiting.reason;
  }
  return String(st.reason ?? st.phase ?? 'Pending');
}

function servicePorts(o: Obj): string {
  const ports = arr(obj(o.spec).ports).map(
    (p) => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${String(p.protocol ?? 'TCP')}`,
  );
  return ports.length ? ports.join(',') : '<none>';
}

/** The ports the Ingress is served on, as its load balancer publishes them; else kubectl's 80 (, 443). */
function ingressPorts(o: Obj): string {
  const published = arr(obj(obj(o.status).loadBalancer).ingress).flatMap((i) =>
    arr(i.ports).map((p) => String(p.port)),
  );
  if (published.length > 0) return [...new Set(published)].join(', ');
  return arr(obj(o.spec).tls).length ? '80, 443' : '80';
}

function lbIngress(o: Obj): string[] {
  return arr(obj(obj(o.status).loadBalancer).ingress).map((i) => String(i.ip ?? i.hostname ?? ''));
}

const COLUMNS: Record<string, Column[]> = {
  Pod: [
    NAME,
    {
      name: 'Ready',
      type: 'string',
      cell: (o) => {
        const total = arr(obj(o.spec).containers).length;
        const ready = arr(obj(o.status).containerStatuses).filter((c) => c.ready === true).length;
        return `${ready}/${total}`;
      },
    },
    { name: 'Status', type: 'string', cell: podStatus },
    {
      name: 'Restarts',
      type: 'string',
      cell: (o) =>
        String(arr(obj(o.status).containerStatuses).reduce((n, c) => n + Number(c.restartCount ?? 0), 0)),
    },
    AGE,
    { name: 'IP', type: 'string', priority: 1, cell: (o) => String(obj(o.status).podIP ?? '<none>') },
    { name: 'Node', type: 'string', priority: 1, cell: (o) => String(obj(o.spec).nodeName ?? '<none>') },
  ],
  Service: [
    NAME,
    { name: 'Type', type: 'string', cell: (o) => String(obj(o.spec).type ?? 'ClusterIP') },
    { name: 'Cluster-IP', type: 'string', cell: (o) => String(obj(o.spec).clusterIP ?? '<none>') },
    {
      name: 'External-IP',
      type: 'string',
      cell: (o) => {
        const ips = lbIngress(o);
        if (ips.length) return ips.join(',');
        return obj(o.spec).type === 'LoadBalancer' ? '<pending>' : '<none>';
      },
    },
    { name: 'Port(s)', type: 'string', cell: servicePorts },
    AGE,
    {
      name: 'Selector',
      type: 'string',
      priority: 1,
      cell: (o) => {
        const sel = Object.entries(obj(obj(o.spec).selector)).map(([k, v]) => `${k}=${String(v)}`);
        return sel.length ? sel.join(',') : '<none>';
      },
    },
  ],
  Node: [
    NAME,
    {
      name: 'Status',
      type: 'string',
      cell: (o) => {
        const ready = arr(obj(o.status).conditions).find((c) => c.type === 'Ready');
        const base = ready?.status === 'True' ? 'Ready' : ready ? 'NotReady' : 'Unknown';
        return obj(o.spec).unschedulable ? `${base},SchedulingDisabled` : base;
      },
    },
    {
      name: 'Roles',
      type: 'string',
      cell: (o) => {
        const roles = Object.keys(obj(obj(o.metadata).labels))
          .filter((k) => k.startsWith('node-role.kubernetes.io/'))
          .map((k) => k.slice('node-role.kubernetes.io/'.length));
        return roles.length ? roles.join(',') : '<none>';
      },
    },
    AGE,
    {
      name: 'Version',
      type: 'string',
      cell: (o) => String(obj(obj(o.status).nodeInfo).kubeletVersion ?? ''),
    },
  ],
  Namespace: [NAME, { name: 'Status', type: 'string', cell: (o) => String(obj(o.status).phase ?? '') }, AGE],
  Ingress: [
    NAME,
    { name: 'Class', type: 'string', cell: (o) => String(obj(o.spec).ingressClassName ?? '<none>') },
    {
      name: 'Hosts',
      type: 'string',
      cell: (o) => {
        const hosts = arr(obj(o.spec).rules).map((r) => String(r.host ?? '*'));
        return hosts.length ? hosts.join(',') : '*';
      },
    },
    { name: 'Address', type: 'string', cell: (o) => lbIngress(o).join(',') },
    { name: 'Ports', type: 'string', cell: ingressPorts },
    AGE,
  ],
  Event: [
    {
      name: 'Last Seen',
      type: 'string',
      cell: (o) =>
        age(o.lastTimestamp ?? o.deprecatedLastTimestamp ?? o.eventTime ?? obj(o.metadata).creationTimestamp),
    },
    { name: 'Type', type: 'string', cell: (o) => String(o.type ?? '') },
    { name: 'Reason', type: 'string', cell: (o) => String(o.reason ?? '') },
    {
      name: 'Object',
      type: 'string',
      cell: (o) => {
        const ref = obj(o.involvedObject ?? o.regarding);
        return `${String(ref.kind ?? '').toLowerCase()}/${String(ref.name ?? '')}`;
      },
    },
    { name: 'Message', type: 'string', cell: (o) => String(o.message ?? o.note ?? '') },
  ],
  IngressClass: [
    NAME,
    { name: 'Controller', type: 'string', cell: (o) => String(obj(o.spec).controller ?? '') },
    { name: 'Parameters', type: 'string', cell: () => '<none>' },
    AGE,
  ],
  // As kubectl prints workloads: ready of wanted, up to date, available.
  Deployment: [
    NAME,
    {
      name: 'Ready',
      type: 'string',
      cell: (o) => `${Number(obj(o.status).readyReplicas ?? 0)}/${Number(obj(o.spec).replicas ?? 1)}`,
    },
    { name: 'Up-to-date', type: 'integer', cell: (o) => Number(obj(o.status).updatedReplicas ?? 0) },
    { name: 'Available', type: 'integer', cell: (o) => Number(obj(o.status).availableReplicas ?? 0) },
    AGE,
  ],
  ReplicaSet: [
    NAME,
    { name: 'Desired', type: 'integer', cell: (o) => Number(obj(o.spec).replicas ?? 1) },
    { name: 'Current', type: 'integer', cell: (o) => Number(obj(o.status).replicas ?? 0) },
    { name: 'Ready', type: 'integer', cell: (o) => Number(obj(o.status).readyReplicas ?? 0) },
    AGE,
  ],
  DaemonSet: [
    NAME,
    { name: 'Desired', type: 'integer', cell: (o) => Number(obj(o.status).desiredNumberScheduled ?? 0) },
    { name: 'Current', type: 'integer', cell: (o) => Number(obj(o.status).currentNumberScheduled ?? 0) },
    { name: 'Ready', type: 'integer', cell: (o) => Number(obj(o.status).numberReady ?? 0) },
    { name: 'Up-to-date', type: 'integer', cell: (o) => Number(obj(o.status).updatedNumberScheduled ?? 0) },
    { name: 'Available', type: 'integer', cell: (o) => Number(obj(o.status).numberAvailable ?? 0) },
    {
      name: 'Node Selector',
      type: 'string',
      cell: (o) => {
        const sel = Object.entries(obj(obj(obj(obj(o.spec).template).spec).nodeSelector));
        return sel.length ? sel.map(([k, v]) => `${k}=${String(v)}`).join(',') : '<none>';
      },
    },
    AGE,
  ],
  // As kubectl prints them: the ports, and the first three addresses (then how many more).
  EndpointSlice: [
    NAME,
    { name: 'AddressType', type: 'string', cell: (o) => String(o.addressType ?? '') },
    {
      name: 'Ports',
      type: 'string',
      cell: (o) =>
        arr(o.ports)
          .map((p) => String(p.port ?? '<unset>'))
          .join(',') || '<unset>',
    },
    {
      name: 'Endpoints',
      type: 'string',
      cell: (o) => {
        const addrs = arr(o.endpoints).flatMap((e) =>
          Array.isArray(e.addresses) ? e.addresses.map(String) : [],
        );
        if (addrs.length === 0) return '<unset>';
        return addrs.slice(0, 3).join(',') + (addrs.length > 3 ? ` + ${addrs.length - 3} more...` : '');
      },
    },
    AGE,
  ],
};

/** A custom kind's additionalPrinterColumns after its name (and Age when it declares none). */
function customColumns(cols: PrinterColumn[]): Column[] {
  if (cols.length === 0) return [NAME, AGE];
  return [
    NAME,
    ...cols.map((c) => ({
      name: c.name,
      type: c.type,
      ...(c.format ? { format: c.format } : {}),
      priority: c.priority ?? 0,
      cell: (o: Obj) => {
        const v = columnCell(o, c.jsonPath, c.type);
        return c.type === 'date' && typeof v === 'string' ? age(v) : v;
      },
    })),
  ];
}

function columnsFor(t: ResourceType): Column[] {
  if (t.custom) return customColumns(t.custom.printerColumns);
  return COLUMNS[t.kind] ?? [NAME, AGE];
}

function partialMetadata(o: Obj, v: string): JsonObject {
  return { kind: 'PartialObjectMetadata', apiVersion: `meta.k8s.io/${v}`, metadata: obj(o.metadata) };
}

export function toTable(
  t: ResourceType,
  objs: JsonObject[],
  req: TableRequest,
  rv: string,
  cont?: string,
): JsonObject {
  const cols = columnsFor(t);
  return {
    kind: 'Table',
    apiVersion: `meta.k8s.io/${req.version}`,
    metadata: { resourceVersion: rv, ...(cont ? { continue: cont } : {}) },
    columnDefinitions: cols.map((c) => ({
      name: c.name,
      type: c.type,
      format: c === NAME ? 'name' : (c.format ?? ''),
      description: c.name,
      priority: c.priority ?? 0,
    })),
    rows: objs.map((o) => ({ cells: cols.map((c) => c.cell(o)), object: partialMetadata(o, req.version) })),
  };
}
