/**
 * Whether tests that drive a real HAProxy can run here: the Debian package and root (to bind the
 * documentation VIPs with `transparent`). A one-line reason when they cannot; CI has both.
 */
import { execFileSync } from 'node:child_process';

export function haproxyMissing(): string | false {
  try {
    execFileSync('haproxy', ['-v'], { stdio: 'ignore' });
  } catch {
    return 'haproxy is not installed (apt-get install haproxy)';
  }
  if (process.getuid?.() !== 0) return 'needs root to bind VIPs that are not on this host';
  return false;
}
