/**
 * Gateway API routes and TLS passthrough as Data Plane API objects, pure: the transport-neutral
 * rules of http-routes.ts become ACLs, `http_request_rules`, `http_response_rules`,
 * `backend_switching_rules` and `tcp_request_rules`, field by field as the v2 and v3 specs name
 * them. Every value in them was quoted by http-routes.ts (encode.ts), so an API that writes the
 * fields into haproxy.cfg as they are (as the real one does) writes one argument per value. (The
 * simulator renders the objects with code of its own, so a wrong field here is caught there.)
 */
import {
  type Acl,
  type GatewayRules,
  RETURN_BODY,
  RETURN_TYPE,
  type HttpRule,
  type SniRules,
  type SwitchRule,
} from '../http-routes.ts';
import type { DpAcl, DpHttpRule, DpRule, DpTcpRule } from './models.ts';

export const aclToDp = (a: Acl): DpAcl => ({ acl_name: a.name, criterion: a.criterion, value: a.value });

export const switchToDp = (r: SwitchRule): DpRule => ({ name: r.backend, cond: 'if', cond_test: r.cond });

const condOf = (cond: string) => (cond ? { cond: 'if' as const, cond_test: cond } : {});

export function httpRuleToDp(r: HttpRule): DpHttpRule {
  const a = r.action;
  const base = { type: a.type, ...condOf(r.cond) };
  switch (a.type) {
    case 'set-var': {
      const dot = a.name.indexOf('.');
      return { ...base, var_scope: a.name.slice(0, dot), var_name: a.name.slice(dot + 1), var_expr: a.expr };
    }
    case 'set-header':
    case 'add-header':
      return { ...base, hdr_name: a.header, hdr_format: a.fmt };
    case 'del-header':
      return { ...base, hdr_name: a.header };
    case 'redirect':
      return {
        ...base,
        redir_type: 'location',
        redir_value: a.location,
        redir_code: a.code as DpHttpRule['redir_code'],
      };
    case 'set-path':
      return { ...base, path_fmt: a.fmt };
    case 'wait-for-body':
      return { ...base, wait_time: a.ms };
    case 'lua':
      // The spec's type is `lua`, the action's name its own field.
      return { ...base, lua_action: a.name, lua_params: a.params };
    case 'return':
      return {
        ...base,
        return_status_code: a.status,
        ...(a.hdrs
          ? {
              return_content_type: RETURN_TYPE,
              return_content_format: 'lf-string' as const,
              return_content: RETURN_BODY,
              return_hdrs: a.hdrs,
            }
          : {}),
      };
  }
}

/** TLS passthrough: wait for the ClientHello, accept it once it is there. */
export const sniTcpRules = (s: SniRules): DpTcpRule[] => [
  { type: 'inspect-delay', timeout: s.inspectDelayMs },
  { type: 'content', action: 'accept', cond: 'if', cond_test: s.accept },
];

export interface RouteObjects {
  acls: DpAcl[];
  httpRequest: DpHttpRule[];
  httpResponse: DpHttpRule[];
  rules: DpRule[];
}

export const gatewayObjects = (g: GatewayRules): RouteObjects => ({
  acls: g.acls.map(aclToDp),
  httpRequest: g.request.map(httpRuleToDp),
  httpResponse: g.response.map(httpRuleToDp),
  rules: g.switching.map(switchToDp),
});
