/**
 * A Gateway's and a GatewayClass's top-level conditions: the class's SupportedVersion (the Gateway
 * API release installed), a Gateway's Accepted and Programmed from its listeners and its VIP. Pure.
 */
import type { VipOutcome } from '../types.ts';
import { cond, type ConditionSpec } from './conditions.ts';
import type { ListenerState } from './listeners.ts';

/** The releases npl-lb is built and tested for. */
const SUPPORTED_RELEASES = /^v1\.[0-6]\./;

export function supportedVersion(v: string | undefined): ConditionSpec {
  if (v === undefined)
    return cond('SupportedVersion', true, 'SupportedVersion', 'Gateway API v1 (bundle version not read)');
  if (SUPPORTED_RELEASES.test(v))
    return cond('SupportedVersion', true, 'SupportedVersion', `Gateway API ${v}`);
  return cond(
    'SupportedVersion',
    false,
    'UnsupportedVersion',
    `Gateway API ${v} is installed; npl-lb is built for v1.0 to v1.6 and serves what those define`,
  );
}

/** Accepted and Programmed of a Gateway: `invalid`, why its parameters cannot be used. */
export function gatewayConditions(
  listeners: ListenerState[],
  vip: VipOutcome,
  invalid?: string,
): ConditionSpec[] {
  if (invalid)
    return [
      cond('Accepted', false, 'InvalidParameters', invalid),
      cond('Programmed', false, 'Invalid', invalid),
    ];
  const bad = listeners.filter((l) => !l.attachable).length;
  // An address of a kind npl-lb does not serve is not accepted; one it cannot use (outside the
  // ranges, held by another object, a family not served) leaves the Gateway accepted and not
  // programmed (GatewayStaticAddresses), as does a further family's.
  const accepted = vip.unsupported
    ? cond('Accepted', false, 'UnsupportedAddress', vip.problem ?? '')
    : bad > 0
      ? cond(
          'Accepted',
          bad < listeners.length,
          'ListenersNotValid',
          `${bad} of ${listeners.length} listeners are not valid`,
        )
      : cond('Accepted', true, 'Accepted');
  const unusable = !vip.unsupported && (vip.reason === 'InvalidVIP' || vip.reason === 'VIPConflict');
  const programmed = unusable
    ? cond('Programmed', false, 'AddressNotUsable', vip.problem ?? '')
    : !vip.vip
      ? cond('Programmed', false, 'AddressNotAssigned', vip.problem ?? 'no VIP')
      : listeners.some((l) => l.programmable)
        ? cond('Programmed', true, 'Programmed')
        : cond('Programmed', false, 'Invalid', 'no listener can be programmed');
  return [accepted, programmed];
}
