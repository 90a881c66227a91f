/**
 * Gateway API routes and TLS passthrough as Data Plane API objects, pure: the transport-neutral
 * rules of http-routes.ts become ACLs, `http_request_rules`, `http_response_rules`,
 * `backend_switching_rules` and `tcp_request_rules`, field by field as the v2 and v3 specs name
 * them. Every value in them was quoted by http-routes.ts (encode.ts), so an API that writes the
 * fields into haproxy.cfg as they are (as the real one does) writes one argument per value. The
 * simulator renders the objects back through the same mapping, so what it writes is what the
 * runtime transport writes.
 */
import {
  type Acl,
  type GatewayRules,
  type HttpAction,
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
    case 'return':
      return { ...base, return_status_code: a.status };
  }
}

export class RuleShapeError extends Error {
  readonly code = 'Invalid';
}

const need = (v: string | number | undefined, what: string): string => {
  if (v === undefined || v === '') throw new RuleShapeError(`${what} is required`);
  return String(v);
};

/** The inverse of httpRuleToDp, for the types it writes; any other type is refused (RuleShapeError). */
export function dpToHttpRule(d: DpHttpRule): HttpRule {
  const cond = d.cond === 'if' && d.cond_test ? d.cond_test : '';
  if (d.cond === 'unless') throw new RuleShapeError('cond unless is not rendered by this simulator');
  let action: HttpAction;
  switch (d.type) {
    case 'set-var':
      action = {
        type: 'set-var',
        name: `${need(d.var_scope, 'var_scope')}.${need(d.var_name, 'var_name')}`,
        expr: need(d.var_expr, 'var_expr'),
      };
      break;
    case 'set-header':
    case 'add-header':
      action = { type: d.type, header: need(d.hdr_name, 'hdr_name'), fmt: need(d.hdr_format, 'hdr_format') };
      break;
    case 'del-header':
      action = { type: 'del-header', header: need(d.hdr_name, 'hdr_name') };
      break;
    case 'redirect':
      if (d.redir_type !== 'location') throw new RuleShapeError('only redir_type location is rendered');
      action = { type: 'redirect', location: need(d.redir_value, 'redir_value'), code: d.redir_code ?? 302 };
      break;
    case 'set-path':
      action = { type: 'set-path', fmt: need(d.path_fmt, 'path_fmt') };
      break;
    case 'return':
      action = { type: 'return', status: d.return_status_code ?? 200 };
      break;
    default:
      throw new RuleShapeError(`rule type ${d.type} is not rendered by this simulator`);
  }
  return { action, cond };
}

/** TLS passthrough: wait for the ClientHello, accept it once it is there. */
export const sniTcpRules = (s: SniRules): DpTcpRule[] => [
  { type: 'inspect-delay', timeout: s.inspectDelayMs },
  { type: 'content', action: 'accept', cond: 'if', cond_test: s.accept },
];

/** A tcp-request rule as a configuration line, for the types sniTcpRules writes. */
export function tcpRuleLine(d: DpTcpRule): string {
  if (d.type === 'inspect-delay') return `tcp-request inspect-delay ${need(d.timeout, 'timeout')}`;
  if (d.type === 'content' && d.action === 'accept') {
    return `tcp-request content accept${d.cond && d.cond_test ? ` ${d.cond} ${d.cond_test}` : ''}`;
  }
  throw new RuleShapeError(`tcp-request ${d.type} ${d.action ?? ''} is not rendered by this simulator`);
}

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
