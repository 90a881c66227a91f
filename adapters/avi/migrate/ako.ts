/**
 * AKO's Helm values (AKOSettings, NetworkSettings, L7Settings, L4Settings, ControllerSettings, ...)
 * as npl-lb values for the Avi adapter: each setting through its rule (ako-rules.ts), every one it
 * knows either carried over or noted with why, and what the values still need said at the end.
 * Pure.
 */
import { ErrorCodes, NplError } from '../../../src/runtime/errors.ts';
import { z } from 'zod';
import { type Migration, type MigrationNote, put, refusePlaceholders } from '../../../src/migrate/result.ts';
import { OWN_POD, RULES, section } from './ako-rules.ts';

/** The leaves of the values that RULES name, and the other top-level keys. */
function settings(values: Record<string, unknown>): [string, unknown][] {
  const out: [string, unknown][] = [];
  for (const [k, v] of Object.entries(values)) {
    const nested = section.parse(v);
    const leaves = Object.keys(RULES).filter((r) => r.startsWith(`${k}.`));
    if (leaves.length > 0 && typeof v === 'object' && v !== null && !Array.isArray(v))
      for (const [sk, sv] of Object.entries(nested)) out.push([`${k}.${sk}`, sv]);
    else out.push([k, v]);
  }
  return out;
}

export function migrateAko(input: unknown): Migration {
  const values = z.record(z.string(), z.unknown()).parse(input);
  const out: Migration = { values: { adapter: { type: 'avi' } }, notes: [] };
  const all = settings(values);
  // Another tool's file (CIS's values, `foo: bar`): refused, never turned into values.
  if (!all.some(([key]) => RULES[key] || OWN_POD.some((p) => key === p || key.startsWith(`${p}.`))))
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `holds no AKO setting (${
        all
          .map(([k]) => k)
          .slice(0, 5)
          .join(', ') || 'nothing'
      }): give the values.yaml of the AKO release`,
    );
  refusePlaceholders(all);
  for (const [key, v] of all) {
    const rule = RULES[key];
    const before = out.notes.length;
    if (rule) rule(v, out, values);
    else if (OWN_POD.some((p) => key === p || key.startsWith(`${p}.`)))
      out.notes.push({
        from: '',
        kind: 'no equivalent',
        why: "the npl-lb chart sets its own Pods' image, security context, resources and logging (stdout)",
      });
    else out.notes.push({ from: '', kind: 'no equivalent', why: 'not an AKO setting npl-lb knows' });
    for (const n of out.notes.slice(before) as MigrationNote[]) n.from ||= key;
  }
  if (!('serviceType' in out.values)) put(out.values, 'serviceType', 'NodePortLocal');
  // AKO serves every LoadBalancer Service (unless layer7Only); beside it, npl-lb serves only those
  // of its class (a Service is never served by both), said for the day AKO goes.
  if (!('defaultLoadBalancer' in out.values) || out.values.defaultLoadBalancer === true) {
    put(out.values, 'defaultLoadBalancer', false);
    out.notes.push({
      from: 'AKOSettings.layer7Only',
      kind: 'by hand',
      why: 'AKO serves every LoadBalancer Service: beside it npl-lb serves those of its loadBalancerClass only (defaultLoadBalancer: false); set it true once AKO is gone',
    });
  }
  if (!(out.values.adapter as { avi?: { vipNetwork?: unknown } }).avi?.vipNetwork)
    out.notes.push({
      from: 'NetworkSettings.vipNetworkList',
      kind: 'by hand',
      why: "empty: give npl-lb the VIP ranges it allocates from (vip.cidrs), or the VIP network Avi's IPAM allocates from (adapter.avi.vipNetwork)",
    });
  if (
    !(out.values.adapter as { avi?: { url?: string } }).avi?.url &&
    !out.notes.some((n) => n.from === 'ControllerSettings.controllerHost')
  )
    out.notes.push({
      from: 'ControllerSettings.controllerHost',
      kind: 'by hand',
      why: "not set: set adapter.avi.url to the Avi Controller's https:// address",
    });
  if (!('clusterName' in out.values))
    out.notes.push({
      from: 'AKOSettings.clusterName',
      kind: 'by hand',
      why: 'not set: npl-lb needs clusterName (the owner mark on the load balancer)',
    });
  return out;
}
