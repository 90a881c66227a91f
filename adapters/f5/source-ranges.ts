/**
 * A Service's `loadBalancerSourceRanges` on BIG-IP: an iRule of the L4 virtual server that lets a
 * connection through when its client address lies in one of the ranges and rejects every other
 * (an empty list rejects all), as HAProxy's `tcp-request connection reject` does. The ranges come
 * from the validation boundary in network form; they are checked again here, so only digits, hex,
 * dots, colons and one slash ever reach the iRule's text. Pure.
 */
import type { L4VirtualService } from '../../src/model/types.ts';

/** The iRule beside an L4 virtual server with client filters. */
export const sourceRangeRuleName = (vs: string): string => `${vs}_src`;

const V4 = /^(?:(?:25[0-5]|2[0-4]\d|1?\d?\d)\.){3}(?:25[0-5]|2[0-4]\d|1?\d?\d)\/(?:3[0-2]|[12]?\d)$/;
const V6 = /^[0-9a-f:]{2,39}\/(?:12[0-8]|1[01]\d|[1-9]?\d)$/;

/** Why the ranges cannot go into an iRule (a value that is not a CIDR in network form), or undefined. */
export function sourceRangeProblem(vs: L4VirtualService): string | undefined {
  const bad = (vs.sourceRanges ?? []).find((r) => !V4.test(r) && !V6.test(r));
  return bad === undefined
    ? undefined
    : `sourceRanges: ${JSON.stringify(bad.slice(0, 64))} is not a CIDR in network form`;
}

/** The iRule's text: accept the ranges, reject the rest. */
export function sourceRangeRule(ranges: readonly string[]): string {
  return [
    'when CLIENT_ACCEPTED priority 100 {',
    ...ranges.map((r) => `  if { [IP::addr [IP::client_addr] equals ${r}] } { return }`),
    '  reject',
    '}',
  ].join('\n');
}
