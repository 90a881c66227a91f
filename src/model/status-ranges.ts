/** The statuses an HTTP check expects, as the model keeps them (HttpCheck.expect). Pure. */
import type { StatusRange } from './types.ts';

/**
 * Expected statuses as the model keeps them: sorted ranges, overlapping and adjacent ones merged;
 * undefined when they are the default (200-399), so a default said aloud changes nothing.
 */
export function statusRanges(
  list: { from: number; to?: number | undefined }[] | undefined,
): StatusRange[] | undefined {
  if (!list?.length) return undefined;
  const sorted = list.map((r) => ({ from: r.from, to: r.to ?? r.from })).sort((a, b) => a.from - b.from);
  const out: StatusRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.from <= last.to + 1) last.to = Math.max(last.to, r.to);
    else out.push({ ...r });
  }
  return out.length === 1 && out[0]!.from === 200 && out[0]!.to === 399 ? undefined : out;
}

/** Ranges as load balancers and people write them: `200-299,304`. */
export const statusList = (ranges: StatusRange[]): string =>
  ranges.map((r) => (r.from === r.to ? `${r.from}` : `${r.from}-${r.to}`)).join(',');
