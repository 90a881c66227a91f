/**
 * The Avi adapter's start-up check: a login (which learns the controller's own version), the
 * object model the calls and objects use (the older of the configured and the controller's, said
 * as a warning when they differ), and the cloud we place into. A refusal (bad credentials, no such
 * cloud) is an AdapterCheckError that will not pass by waiting; the rest may.
 */
import { AdapterCheckError } from '../../src/adapter/contract.ts';
import type { AviPlacement } from './objects.ts';
import { AviError, type AviSession } from './session.ts';

export async function verifyController(
  session: AviSession,
  at: AviPlacement,
  opts: { url: string; tenant: string },
): Promise<{ warnings: string[]; at: AviPlacement }> {
  try {
    await session.login();
    // Objects are rendered in the object model the calls are made in (gracefulDisable's field).
    const warnings: string[] = [];
    if (session.apiVersion !== at.version) {
      warnings.push(
        `adapter.avi.controllerVersion ${at.version} is newer than the controller's own ${session.controllerVersion}: calls and objects use ${session.apiVersion}`,
      );
      at = { ...at, version: session.apiVersion };
    }
    const r = await session.call('GET', `/api/cloud?name=${encodeURIComponent(at.cloud)}`);
    if (r.status !== 200 || ((r.body as { count?: number }).count ?? 0) === 0) {
      throw new AdapterCheckError(
        `Avi ${opts.url}: cloud ${at.cloud} not found (tenant ${opts.tenant})`,
        true,
      );
    }
    return { warnings, at };
  } catch (err) {
    if (err instanceof AdapterCheckError) throw err;
    if (err instanceof AviError) {
      throw new AdapterCheckError(
        `Avi ${opts.url}: ${err.message}`,
        err.status === 401 || err.status === 403,
      );
    }
    throw err;
  }
}
