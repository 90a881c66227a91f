/**
 * Where our objects live in a tenant (the two AS3 layouts), and how a virtual service names its
 * pools, certificates and the objects its iRules name by absolute path in each. Pure.
 */
import { poolTlsName, type TlsPaths } from './pool-tls.ts';

/** The application inside the tenant that holds our objects (whole-tenant declarations). */
export const APP = 'npl_lb';

/**
 * Per-application declarations (AS3 3.47 and later): one application per pool (`P_<pool>`) and per
 * virtual service (`V_<name>`), a virtual service pointing at its pools by absolute path.
 */
export const poolApp = (pool: string): string => `P_${pool}`;
export const vsApp = (vs: string): string => `V_${vs}`;
export const certApp = (cert: string): string => `C_${cert}`;
/** Whether an application of the tenant is one of the layouts we write. */
export const isOurApp = (name: string): boolean =>
  name === APP || name.startsWith('P_') || name.startsWith('V_') || name.startsWith('C_');
/**
 * How a virtual service names its pools and certificates: by name in one application, by path
 * across them; and the absolute paths its iRules name objects by (`paths`, for the virtual
 * service of that name).
 */
export interface Refs {
  pool: (name: string) => string;
  cert: (name: string) => string;
  paths: (vs: string) => TlsPaths;
}
/** Whole-tenant declarations: everything in APP of `tenant`. */
export const withinApp = (tenant: string): Refs => ({
  pool: (n) => n,
  cert: (n) => n,
  paths: () => ({
    pool: (n) => `/${tenant}/${APP}/${n}`,
    tls: (p) => `/${tenant}/${APP}/${poolTlsName(p)}`,
    own: (n) => `/${tenant}/${APP}/${n}`,
    tlsRef: (p) => poolTlsName(p),
  }),
});
export const acrossApps = (tenant: string): Refs => ({
  pool: (n) => `/${tenant}/${poolApp(n)}/${n}`,
  cert: (n) => `/${tenant}/${certApp(n)}/${n}`,
  paths: (vs) => ({
    pool: (n) => `/${tenant}/${poolApp(n)}/${n}`,
    tls: (p) => `/${tenant}/${poolApp(p)}/${poolTlsName(p)}`,
    own: (n) => `/${tenant}/${vsApp(vs)}/${n}`,
    tlsRef: (p) => `/${tenant}/${poolApp(p)}/${poolTlsName(p)}`,
  }),
});
