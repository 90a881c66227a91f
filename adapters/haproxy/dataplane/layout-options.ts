/** How the Data Plane transport lays the model out on the device (layout.ts, server-slots.ts). */
import type { ApiVersion } from './models.ts';

export interface LayoutOptions {
  owner: string;
  apiVersion: ApiVersion;
  /** Server slots per step: a backend has a multiple of this many servers. */
  slots: number;
  healthChecks: boolean;
  /** Bind VIPs that are not on this host (`transparent`). */
  transparentBinds: boolean;
  /** Where a CA bundle (a TLS pool's, a bind's for client certificates) is stored on the device (ca-files.ts); absent: none is. */
  caPath?: (ca: string) => string | undefined;
  /** What names this HAProxy among others on its host (its Data Plane API's address): Mixed mode's loop sockets. */
  instance?: string;
  /** Where a stored certificate is (storage/ssl_certificates), by its model name. */
  certPath?: (name: string) => string | undefined;
}
