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
    type: z.literal('avi').describe('the Avi Controller (Avi Load Balancer, formerly NSX ALB)'),
    url: z.url({ protocol: /^https?$/ }).describe("the Avi Controller's address, https://host[:port]"),
    controllerVersion: z
      .string()
      .regex(/^\d+\.\d+\.\d+$/, 'must be like 22.1.3')
      .default('22.1.3')
      .describe(
        "the API version sent as X-Avi-Version: the controller's own version, or the oldest of a cluster of them",
      ),
    tenant: name.default('admin').describe("the tenant npl-lb's objects are created in (AKO's tenantName)"),
    cloud: name
      .default('Default-Cloud')
      .describe("the cloud virtual services are placed in (AKO's cloudName)"),
    serviceEngineGroup: name
      .default('Default-Group')
      .describe("the Service Engine Group that serves the virtual services (AKO's serviceEngineGroupName)"),
    vrf: name.default('global').describe('the VRF context of the VIPs and pools'),
    // Avi 31.2.1 no longer defaults the pool's graceful disable timeout (AKO sets it too).
    gracefulDisableTimeoutSeconds: z
      .number()
      .int()
      .min(-1)
      .max(432000)
      .default(60)
      .describe(
        "seconds a draining server keeps its connections (the pool's graceful disable timeout; -1 until they end, 0 none)",
      ),
    /**
     * Avi's IPAM allocates the VIPs (AKO's vipNetworkList): the network and the IPv4 subnet (and,
     * for IPv6 VIPs, the IPv6 subnet) of it VsVips ask an address from; the address read back is what statuses publish. A Service's
     * loadBalancerIP (or a Gateway's spec.addresses) is still honoured. Without it, vip.cidrs.
     */
    vipNetwork: z
      .object({
        name: name.describe("the network VIPs are allocated in (AKO's vipNetworkList networkName)"),
        cidr: z.cidrv4().describe('its IPv4 subnet VsVips ask an address from'),
        /** The network's IPv6 subnet (AKO's v6cidr): IPv6 VIPs are allocated there; absent: none. */
        cidr6: z
          .cidrv6()
          .optional()
          .describe("its IPv6 subnet, for IPv6 VIPs (AKO's v6cidr); absent: no IPv6 VIPs"),
      })
      .strict()
      .optional(),
    ...tlsSettings,
    concurrency: z
      .number()
      .int()
      .min(1)
      .max(64)
      .default(8)
      .describe('API calls in flight at once (writes of independent objects overlap)'),
    requestTimeoutSeconds: z
      .number()
      .int()
      .positive()
      .default(60)
      .describe('seconds before an API call that has not answered counts as failed (Unavailable, retried)'),
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
