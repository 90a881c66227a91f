/**
 * The `adapter:` block of the controller config for HAProxy. The `runtime` transport drives a
 * stock HAProxy through its admin socket and reloads it through its master socket; the paths
 * are those of the HAProxy installation it manages.
 */
import { z } from 'zod';
import { parseSettings } from '../settings.ts';
import type { HaproxyRuntimeOptions } from './runtime-adapter.ts';

export const haproxySettingsSchema = z
  .object({
    type: z.literal('haproxy'),
    transport: z
      .literal('runtime', {
        message: 'only "runtime" is available (the Data Plane API transport is not built yet)',
      })
      .default('runtime'),
    bin: z.string().min(1).default('haproxy'),
    configFile: z.string().min(1),
    adminSocket: z.string().min(1),
    masterSocket: z.string().min(1),
    healthChecks: z.boolean().default(true),
    bindOptions: z.string().optional(),
  })
  .strict();

export function haproxyOptions(owner: string, settings: Record<string, unknown>): HaproxyRuntimeOptions {
  const s = parseSettings(haproxySettingsSchema, settings);
  return {
    owner,
    bin: s.bin,
    configFile: s.configFile,
    adminSocket: s.adminSocket,
    masterSocket: s.masterSocket,
    healthChecks: s.healthChecks,
    ...(s.bindOptions ? { bindOptions: s.bindOptions } : {}),
  };
}
