/**
 * What an HTTPRoute rule asks of the pools it sends to beside their Service's own (its retries, its
 * session cookie): each rule asking them gets a pool variant of its own (names.ts). Pure data.
 */

/**
 * What an HTTPRoute rule's `retry` asks of the pools it sends to: the statuses sent again (an empty
 * list: failed and closed connections alone) and how many more attempts (absent: the pool's own).
 */
export interface RouteRetry {
  statuses: number[];
  attempts?: number;
}

/**
 * A route's cookie of session persistence (GEP-1619): the load balancer inserts `name` naming the
 * member, and a request carrying it goes back to that member while the session lasts.
 */
export interface SessionCookie {
  /**
   * The cookie's name (letters, digits, `-`, `_` and `.`, from the validation boundary); absent:
   * the pool's own (persistenceCookie).
   */
  name?: string;
  /** Seconds a session lasts from its first answer (absoluteTimeout); absent: no bound. */
  absoluteSeconds?: number;
  /** The cookie outlives the browser's session: its Max-Age is `absoluteSeconds` (Permanent). */
  permanent?: boolean;
}

/** What an HTTPRoute rule asks of the pools it sends to beside their Service's: its own variant. */
export interface RuleVariant {
  retry?: RouteRetry;
  session?: SessionCookie;
}
