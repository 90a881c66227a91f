/**
 * The `adapter:` block of the controller config for Avi (mirrors AKO's controller settings), with
 * credentials from NPL_LB_AVI_USERNAME and NPL_LB_AVI_PASSWORD.
 */
import { z } from 'zod';
import { credentials, parseSettings, tlsSettings, tlsTrust } from '../settings.ts';
import type { AviAdapterOptions } from './adapter.ts';

const name = z.string().min(1).max(255);

export const aviSettingsSchema = z
  .object({
    type: z.literal('avi'),
    /** https://controller[:port] */
    url: z.url({ protocol: /^https?$/ }),
    /** The API version sent as X-Avi-Version. */
    controllerVersion: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, 'must be like 22.1.3')
      .default('22.1.3'),
    tenant: name.default('admin'),
    cloud: name.default('Default-Cloud'),
    serviceEngineGroup: name.default('Default-Group'),
    vrf: name.default('global'),
    /**
     * How long a draining server keeps its connections (s; -1 until they end, 0 none): the pool's
     * graceful disable timeout, which Avi 31.2.1 no longer defaults (AKO sets it too).
     */
    gracefulDisableTimeoutSeconds: z.number().int().min(-1).max(432000).default(60),
    /**
     * Avi's IPAM allocates the VIPs (AKO's vipNetworkList): the network and the IPv4 subnet (and,
     * for IPv6 VIPs, the IPv6 subnet) of it VsVips ask an address from; the address read back is what statuses publish. A Service's
     * loadBalancerIP (or a Gateway's spec.addresses) is still honoured. Without it, vip.cidrs.
     */
    vipNetwork: z
      .object({
        name,
        cidr: z.cidrv4(),
        /** The network's IPv6 subnet (AKO's v6cidr): IPv6 VIPs are allocated there; absent: none. */
        cidr6: z.cidrv6().optional(),
      })
      .strict()
      .optional(),
    ...tlsSettings,
    concurrency: z.number().int().min(1).max(64).default(8),
    requestTimeoutSeconds: z.number().int().positive().default(60),
  })
  .strict();

export function aviOptions(
  owner: string,
  settings: Record<string, unknown>,
  env: NodeJS.ProcessEnv,
): AviAdapterOptions {
  const s = parseSettings(aviSettingsSchema, settings);
  return {
    owner,
    url: s.url,
    ...credentials('AVI', env),
    version: s.controllerVersion,
    tenant: s.tenant,
    cloud: s.cloud,
    seGroup: s.serviceEngineGroup,
    vrf: s.vrf,
    gracefulDisableSeconds: s.gracefulDisableTimeoutSeconds,
    ...(s.vipNetwork ? { vipNetwork: s.vipNetwork } : {}),
    ...tlsTrust(s),
    concurrency: s.concurrency,
    timeoutMs: s.requestTimeoutSeconds * 1000,
  };
}
