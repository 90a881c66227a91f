/**
 * zod schemas for the parts of Kubernetes objects npl-lb reads. Objects from informers are parsed
 * here once; everything past this boundary is typed.
 */
import { z } from 'zod';

const stringMap = z.record(z.string(), z.string());

export const objectMetaSchema = z
  .object({
    name: z.string(),
    namespace: z.string().default(''),
    uid: z.string().default(''),
    resourceVersion: z.string().default(''),
    labels: stringMap.default({}),
    annotations: stringMap.default({}),
    creationTimestamp: z.string().optional(),
    deletionTimestamp: z.string().optional(),
  })
  .loose();

const protocol = z.enum(['TCP', 'UDP', 'SCTP']).default('TCP');

const condition = z.object({ type: z.string(), status: z.string() }).loose();

export const containerPortSchema = z
  .object({
    name: z.string().optional(),
    containerPort: z.number().int(),
    protocol,
    hostPort: z.number().int().optional(),
  })
  .loose();

/** A port a probe names: a number, or the name of a container port. */
const probePort = z.union([z.number().int(), z.string()]);

/**
 * A container's readiness probe, as far as a load balancer can follow it: an HTTP GET or a TCP
 * connect, with its timings (the API server's defaults when absent). Exec and gRPC probes are
 * kept as their kind only.
 */
export const probeSchema = z
  .object({
    httpGet: z
      .object({
        path: z.string().default('/'),
        port: probePort,
        host: z.string().optional(),
        scheme: z.enum(['HTTP', 'HTTPS']).default('HTTP'),
        httpHeaders: z.array(z.object({ name: z.string(), value: z.string() })).default([]),
      })
      .optional(),
    tcpSocket: z.object({ port: probePort }).optional(),
    exec: z.unknown().optional(),
    grpc: z.unknown().optional(),
    periodSeconds: z.number().int().default(10),
    timeoutSeconds: z.number().int().default(1),
    successThreshold: z.number().int().default(1),
    failureThreshold: z.number().int().default(3),
  })
  .loose();
export type Probe = z.infer<typeof probeSchema>;

/**
 * A Pod as the controller keeps it: only the fields npl-lb reads. A cluster holds many Pods and
 * each carries much it does not use (managedFields, volumes, the scheduler's defaults, statuses of
 * every container), so unknown fields are dropped here, at the validation boundary, instead of
 * being kept in memory for every Pod.
 */
export const podSchema = z.object({
  metadata: z.object({ ...objectMetaSchema.shape }),
  spec: z
    .object({
      nodeName: z.string().optional(),
      containers: z
        .array(
          z.object({
            name: z.string(),
            ports: z.array(z.object({ ...containerPortSchema.shape })).default([]),
            // A probe the schema cannot read is the kubelet's to refuse; the pool keeps a TCP check.
            readinessProbe: probeSchema.optional().catch(undefined),
          }),
        )
        .default([]),
      // The conditions Ready waits for besides the containers (npl-lb's own: readiness-gate.ts).
      readinessGates: z.array(z.object({ conditionType: z.string() })).default([]),
    })
    .default({ containers: [], readinessGates: [] }),
  status: z
    .object({
      phase: z.string().optional(),
      podIP: z.string().optional(),
      podIPs: z.array(z.object({ ip: z.string() })).optional(),
      conditions: z
        .array(
          z.object({
            type: z.string(),
            status: z.string(),
            reason: z.string().optional(),
            message: z.string().optional(),
            lastTransitionTime: z.string().optional(),
          }),
        )
        .default([]),
    })
    .default({ conditions: [] }),
});

export type Pod = z.infer<typeof podSchema>;

/** The label naming the Service an EndpointSlice belongs to. */
export const SERVICE_NAME_LABEL = 'kubernetes.io/service-name';

/**
 * An EndpointSlice as the controller keeps it: which Service it belongs to (its label) and the
 * Pods its endpoints name. Followed for Services without a selector only, whose slices someone
 * else writes (the conformance suite's "manual" Services); the endpoints' own addresses are not
 * used: members are the named Pods' NodePortLocal mappings, as for any Service.
 */
export const endpointSliceSchema = z.object({
  metadata: z.object({ ...objectMetaSchema.shape }),
  addressType: z.string().default('IPv4'),
  endpoints: z
    .array(
      z.object({
        targetRef: z
          .object({ kind: z.string().optional(), name: z.string(), namespace: z.string().optional() })
          .optional(),
      }),
    )
    .nullable()
    .transform((e) => e ?? [])
    .default([]),
});
export type EndpointSlice = z.infer<typeof endpointSliceSchema>;

const lbStatus = z
  .object({
    loadBalancer: z
      .object({ ingress: z.array(z.object({ ip: z.string().optional() }).loose()).default([]) })
      .loose()
      .default({ ingress: [] }),
  })
  .loose()
  .default({ loadBalancer: { ingress: [] } });

export const servicePortSchema = z
  .object({
    name: z.string().optional(),
    port: z.number().int(),
    protocol,
    targetPort: z.union([z.number().int(), z.string()]).optional(),
    nodePort: z.number().int().optional(),
    /** `kubernetes.io/h2c`: the port speaks HTTP/2 without TLS (GEP-1911). */
    appProtocol: z.string().optional(),
  })
  .loose();

export const serviceSchema = z
  .object({
    metadata: objectMetaSchema,
    spec: z
      .object({
        type: z.string().default('ClusterIP'),
        selector: stringMap.optional(),
        ports: z.array(servicePortSchema).default([]),
        loadBalancerClass: z.string().optional(),
        loadBalancerIP: z.string().optional(),
        loadBalancerSourceRanges: z.array(z.string()).optional(),
        ipFamilies: z.array(z.string()).optional(),
        ipFamilyPolicy: z.string().optional(),
      })
      .loose()
      .default({ type: 'ClusterIP', ports: [] }),
    status: lbStatus,
  })
  .loose();

export type Service = z.infer<typeof serviceSchema>;

export const nodeSchema = z
  .object({
    metadata: objectMetaSchema,
    spec: z
      .object({
        unschedulable: z.boolean().optional(),
        taints: z.array(z.object({ key: z.string(), effect: z.string().optional() }).loose()).default([]),
      })
      .loose()
      .default({ taints: [] }),
    status: z
      .object({
        addresses: z.array(z.object({ type: z.string(), address: z.string() }).loose()).default([]),
        conditions: z.array(condition).default([]),
      })
      .loose()
      .default({ addresses: [], conditions: [] }),
  })
  .loose();

export type Node = z.infer<typeof nodeSchema>;

const backendSchema = z
  .object({
    service: z
      .object({
        name: z.string(),
        port: z
          .object({ number: z.number().int().optional(), name: z.string().optional() })
          .loose()
          .default({}),
      })
      .loose()
      .optional(),
  })
  .loose();

export type IngressBackend = z.infer<typeof backendSchema>;

export const ingressSchema = z
  .object({
    metadata: objectMetaSchema,
    spec: z
      .object({
        ingressClassName: z.string().optional(),
        defaultBackend: backendSchema.optional(),
        rules: z
          .array(
            z
              .object({
                host: z.string().optional(),
                http: z
                  .object({
                    paths: z
                      .array(
                        z
                          .object({
                            path: z.string().optional(),
                            pathType: z.enum(['Prefix', 'Exact', 'ImplementationSpecific']).default('Prefix'),
                            backend: backendSchema,
                          })
                          .loose(),
                      )
                      .default([]),
                  })
                  .loose()
                  .optional(),
              })
              .loose(),
          )
          .default([]),
        tls: z
          .array(
            z.object({ hosts: z.array(z.string()).default([]), secretName: z.string().optional() }).loose(),
          )
          .optional(),
      })
      .loose()
      .default({ rules: [] }),
    status: lbStatus,
  })
  .loose();

export type Ingress = z.infer<typeof ingressSchema>;

export const ingressClassSchema = z
  .object({
    metadata: objectMetaSchema,
    spec: z
      .object({
        controller: z.string(),
        /** The class's parameters (networking.k8s.io/v1 IngressClassParametersReference). */
        parameters: z
          .object({
            apiGroup: z.string().optional(),
            kind: z.string(),
            name: z.string(),
            scope: z.string().optional(),
            namespace: z.string().optional(),
          })
          .loose()
          .optional(),
      })
      .loose(),
  })
  .loose();

export type IngressClass = z.infer<typeof ingressClassSchema>;

/** A Secret of type kubernetes.io/tls as far as npl-lb reads it: the PEM chain and key, base64. */
export const tlsSecretSchema = z
  .object({
    metadata: objectMetaSchema,
    type: z.string().default('Opaque'),
    data: stringMap.default({}),
  })
  .loose();

export type TlsSecret = z.infer<typeof tlsSecretSchema>;

export function parseOr<T>(schema: z.ZodType<T>, raw: unknown): T | undefined {
  const r = schema.safeParse(raw);
  return r.success ? r.data : undefined;
}
