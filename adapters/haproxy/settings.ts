/**
 * The `adapter:` block of the controller config for HAProxy, one of two transports:
 * - `runtime` drives a stock HAProxy through its admin socket and reloads it through its master
 *   socket; the paths are those of the HAProxy installation it manages.
 * - `dataplane` talks to the HAProxy Data Plane API (v2 or v3) with basic auth, credentials from
 *   NPL_LB_HAPROXY_USERNAME and NPL_LB_HAPROXY_PASSWORD.
 */
import { z } from 'zod';
import type { LoadBalancerAdapter } from '../../src/adapter/contract.ts';
import { credentials, parseSettings, tlsSettings, tlsTrust } from '../settings.ts';
import { HaproxyDataplaneAdapter } from './dataplane/adapter.ts';
import { HaproxyRuntimeAdapter } from './runtime-adapter.ts';

export const haproxyRuntimeSchema = z
  .object({
    type: z.literal('haproxy').describe('HAProxy'),
    transport: z
      .literal('runtime')
      .describe('runtime: a stock HAProxy driven through its sockets and haproxy.cfg'),
    bin: z
      .string()
      .min(1)
      .default('haproxy')
      .describe('the haproxy binary, for `haproxy -c` before each reload'),
    configFile: z
      .string()
      .min(1)
      .describe('the haproxy.cfg HAProxy runs from; npl-lb writes it (its own sections only)'),
    adminSocket: z
      .string()
      .min(1)
      .describe("HAProxy's admin (stats) socket: servers change there without a reload"),
    masterSocket: z.string().min(1).describe("HAProxy's master socket (-S): reloads go through it"),
    healthChecks: z
      .boolean()
      .default(true)
      .describe("HAProxy checks each member (TCP, or the HTTP check of the Pods' readiness probe)"),
    bindOptions: z.string().optional().describe('words added to every bind line (e.g. transparent)'),
    checkBinds: z
      .boolean()
      .default(false)
      .describe('try each new VIP:port before a reload (only when npl-lb shares HAProxy network namespace)'),
    socketGroup: z
      .number()
      .int()
      .min(0)
      .max(2147483647)
      .optional()
      .describe("the group that may use the admin socket (the controller's, when it does not run as root)"),
  })
  .strict();

export const haproxyDataplaneSchema = z
  .object({
    type: z.literal('haproxy').describe('HAProxy'),
    transport: z.literal('dataplane').describe('dataplane: the HAProxy Data Plane API (basic auth)'),
    url: z
      .url({ protocol: /^https?$/ })
      .describe('the Data Plane API, http(s)://host:port (without /v2 or /v3)'),
    apiVersion: z.enum(['v2', 'v3']).default('v3').describe('the Data Plane API version'),
    slots: z
      .number()
      .int()
      .min(1)
      .max(1000)
      .default(10)
      .describe('server slots per backend step: scaling within them never reloads HAProxy'),
    healthChecks: z
      .boolean()
      .default(true)
      .describe("HAProxy checks each member (TCP, or the HTTP check of the Pods' readiness probe)"),
    transparentBinds: z
      .boolean()
      .default(false)
      .describe('bind VIPs that are not configured on the HAProxy host (transparent)'),
    ...tlsSettings,
    requestTimeoutSeconds: z
      .number()
      .int()
      .positive()
      .default(30)
      .describe('seconds before an API call that has not answered counts as failed (Unavailable, retried)'),
  })
  .strict();

export const haproxySettingsSchema = z.preprocess(
  (v) => (v && typeof v === 'object' && !('transport' in v) ? { ...v, transport: 'runtime' } : v),
  z.discriminatedUnion('transport', [haproxyRuntimeSchema, haproxyDataplaneSchema], {
    message: 'transport must be "runtime" or "dataplane"',
  }),
);

export function haproxyAdapter(
  owner: string,
  settings: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): LoadBalancerAdapter {
  const s = parseSettings(haproxySettingsSchema, settings);
  if (s.transport === 'dataplane') {
    return new HaproxyDataplaneAdapter({
      owner,
      url: s.url,
      apiVersion: s.apiVersion,
      ...credentials('HAPROXY', env),
      slots: s.slots,
      healthChecks: s.healthChecks,
      transparentBinds: s.transparentBinds,
      ...tlsTrust(s),
      timeoutMs: s.requestTimeoutSeconds * 1000,
    });
  }
  return new HaproxyRuntimeAdapter({
    owner,
    bin: s.bin,
    configFile: s.configFile,
    adminSocket: s.adminSocket,
    masterSocket: s.masterSocket,
    healthChecks: s.healthChecks,
    ...(s.bindOptions ? { bindOptions: s.bindOptions } : {}),
    ...(s.socketGroup ? { socketGroup: s.socketGroup } : {}),
    checkBinds: s.checkBinds,
  });
}
