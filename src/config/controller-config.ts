/**
 * The controller's configuration: one YAML file whose shape mirrors the Helm values. Parsed by one
 * zod schema; a bad file is one line naming the field (exit code 2).
 */
import { readFileSync } from 'node:fs';
import { isIP } from 'node:net';
import { z } from 'zod';
import { ErrorCodes, NplError } from '../runtime/errors.ts';
import { parseYamlDocument, YamlInputError } from '../runtime/yaml-input.ts';

const dnsLabel = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;
/** An IPv4 (`192.0.2.0/24`) or IPv6 (`fd00:10::/112`) CIDR, the prefix within the family's bits. */
export const cidrSchema = z.string().refine((c) => {
  const [ip = '', bits = '', ...rest] = c.split('/');
  const family = isIP(ip);
  if (rest.length > 0 || family === 0 || !/^(0|[1-9]\d{0,2})$/.test(bits) || ip.includes('%')) return false;
  if (family === 4 && ip.split('.').some((o) => o.length > 1 && o.startsWith('0'))) return false;
  // IPv6 in hexadecimal only (`::ffff:192.0.2.0/120` is written `::ffff:c000:200/120`), as the chart's schema has it.
  if (family === 6 && ip.includes('.')) return false;
  return Number(bits) <= (family === 4 ? 32 : 128);
}, 'must be an IPv4 or IPv6 CIDR such as 192.0.2.0/24 or fd00:10::/112');

export const controllerConfigSchema = z
  .object({
    clusterName: z
      .string({ error: 'is required' })
      .min(1, 'is required')
      .max(32, 'must be at most 32 characters')
      .regex(dnsLabel, 'must be lower-case letters, digits and dashes')
      .describe('the owner mark on the load balancer; unique among the clusters that share one'),
    serviceType: z
      .enum(['NodePortLocal', 'NodePort', 'ClusterIP'])
      .default('NodePortLocal')
      .describe('how pool members are built: nodeIP:nodePort per Pod, every Ready node, or Pod IPs'),
    autoAnnotate: z
      .boolean()
      .default(true)
      .describe('annotate our LoadBalancer Services and Ingress backends for NodePortLocal'),
    ingressController: z
      .string()
      .min(1)
      .default('npl-lb.io/ingress-controller')
      .describe('IngressClasses with this spec.controller are ours'),
    gatewayController: z
      .string()
      .min(1)
      .default('npl-lb.io/gateway-controller')
      .describe('GatewayClasses with this spec.controllerName are ours'),
    gatewayClass: z
      .string()
      .regex(/^[a-z0-9]([-a-z0-9.]*[a-z0-9])?$/, 'must be a DNS subdomain name')
      .max(253)
      .optional()
      .describe(
        'a GatewayClass of ours the controller creates once the Gateway API is installed (then leaves to its owner); absent: none',
      ),
    /** The port of the shared HTTP virtual service of each IngressClass. */
    ingressHttpPort: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .default(80)
      .describe('the port of the shared HTTP virtual service of each IngressClass'),
    ingressHttpsPort: z
      .number()
      .int()
      .min(1)
      .max(65535)
      .default(443)
      .describe('the port of the shared HTTPS virtual service of each IngressClass (Ingress tls:)'),
    loadBalancerClass: z
      .string()
      .min(1)
      .default('npl-lb.io/lb')
      .describe('LoadBalancer Services with this spec.loadBalancerClass are ours'),
    defaultLoadBalancer: z
      .boolean()
      .default(false)
      .describe('LoadBalancer Services without a loadBalancerClass are ours too'),
    loadBalancerClasses: z
      .array(
        z
          .object({
            name: z
              .string()
              .max(253)
              .regex(
                /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?\/[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/,
                'a qualified name, domain/name',
              )
              .describe('a spec.loadBalancerClass'),
            parameters: z
              .object({
                namespace: z.string().regex(dnsLabel, 'a namespace name'),
                name: z.string().min(1).max(253),
              })
              .strict()
              .describe('the LoadBalancerParameters (npl-lb.io/v1alpha1) that place its virtual services'),
          })
          .strict(),
      )
      .default([])
      .refine((a) => new Set(a.map((c) => c.name)).size === a.length, 'each class once')
      .describe(
        'more LoadBalancer Service classes that are ours, each placed by its LoadBalancerParameters (issue 33); loadBalancerClass itself may be one',
      ),
    namespaces: z
      .object({
        include: z.array(z.string()).default([]).describe('only these namespaces (empty: all)'),
        exclude: z.array(z.string()).default([]).describe('all namespaces but these'),
      })
      .strict()
      .default({ include: [], exclude: [] }),
    vip: z
      .object({
        cidrs: z
          .array(cidrSchema)
          .default([])
          .describe('VIPs are allocated here, and a requested VIP must lie here'),
      })
      .strict()
      .default({ cidrs: [] }),
    loadBalancerIPMode: z
      .enum(['Proxy', 'VIP'])
      .default('Proxy')
      .describe(
        'status.loadBalancer.ingress[].ipMode of our Services: Proxy (traffic reaches the Pods through the load balancer, so kube-proxy keeps in-cluster clients going through it) or VIP',
      ),
    drainCordonedNodes: z
      .boolean()
      .default(true)
      .describe('drain the members on cordoned nodes, as on nodes excluded from load balancers'),
    drainSeconds: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .default(30)
      .describe('how long members on a node in maintenance drain before they leave their pools'),
    readinessGateWritesPerSecond: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(50)
      .describe(
        'the most readiness gate (npl-lb.io/load-balancer-ready) condition patches a second, for thousands of Pods rolling at once',
      ),
    readinessGateWarnSeconds: z
      .number()
      .int()
      .min(0)
      .max(86400)
      .default(60)
      .describe(
        "a Pod's readiness gate False this long gets a Warning Event (LoadBalancerGatePending; 0: never)",
      ),
    healthIntervalSeconds: z
      .number()
      .int()
      .min(0)
      .max(3600)
      .default(10)
      .describe(
        "how often members' health is read from the load balancer (0: never; the dashboard can still ask)",
      ),
    adapter: z
      .object({
        type: z
          .string()
          .min(1)
          .describe('a vendor of the registry (adapters/index.ts); the rest of the block below'),
      })
      .loose()
      .default({ type: 'memory' }),
  })
  .strict();

export type ControllerConfig = z.infer<typeof controllerConfigSchema>;

/** Parses the config text; an NplError naming the first bad field otherwise. */
export function parseControllerConfig(text: string, source = 'config'): ControllerConfig {
  let raw: unknown;
  try {
    raw = parseYamlDocument(text) ?? {};
  } catch (err) {
    const limit = err instanceof YamlInputError && ['size', 'depth', 'aliases'].includes(err.problem);
    throw new NplError(
      limit ? ErrorCodes.INPUT_LIMIT : ErrorCodes.CONFIG_INVALID,
      `${source}: not valid YAML: ${err instanceof Error ? err.message.split('\n')[0] : String(err)}`,
    );
  }
  const r = controllerConfigSchema.safeParse(raw);
  if (!r.success) {
    const issue = r.error.issues[0]!;
    const field = issue.path.join('.') || '(top level)';
    const msg =
      issue.code === 'unrecognized_keys'
        ? `unknown field ${issue.keys.map((k) => `"${k}"`).join(', ')}`
        : issue.message;
    throw new NplError(ErrorCodes.CONFIG_INVALID, `${source}: ${field}: ${msg}`);
  }
  return r.data;
}

export function loadControllerConfig(path: string): ControllerConfig {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
    );
  }
  return parseControllerConfig(text, path);
}

export function namespaceSelected(cfg: ControllerConfig, namespace: string): boolean {
  if (cfg.namespaces.exclude.includes(namespace)) return false;
  return cfg.namespaces.include.length === 0 || cfg.namespaces.include.includes(namespace);
}
