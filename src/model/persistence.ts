/**
 * The cookie a load balancer inserts for a pool's `Cookie` persistence: named per pool, so a
 * client of two applications on one host keeps one cookie per application (a token: letters,
 * digits and `_`). Every device that takes a cookie name writes it alike. Pure.
 */
import { createHash } from 'node:crypto';

export const persistenceCookie = (pool: string): string =>
  `npllb_${createHash('sha256').update(pool).digest('hex').slice(0, 12)}`;
