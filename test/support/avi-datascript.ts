/**
 * Avi DataScripts run for real: npl-lb's scripts in a Lua VM (wasmoon, Lua 5.4 built to
 * WebAssembly; Avi runs LuaJIT, and the scripts keep to what both have) against a stand-in of the
 * `avi` API and the Default-TLS protocol parser with the calls the scripts make. So a test holds
 * the script text itself to the model, not a description of it.
 */
import { LuaFactory } from 'wasmoon';

const engine = await new LuaFactory().createEngine();

/** A Lua expression's value (for string literals the adapter writes). */
export function luaEval(expression: string): unknown {
  return engine.doStringSync(`return ${expression}`);
}

/**
 * An HTTP request DataScript: the request headers (lower-case names; the script may remove some)
 * and the value math.random() returns. The status the script answered with, if it did.
 */
export function runHttpScript(
  script: string,
  headers: Map<string, string>,
  random: number,
): number | undefined {
  let status: number | undefined;
  engine.global.set('avi', {
    http: {
      get_header: (name: string) => headers.get(name.toLowerCase()),
      remove_header: (name: string) => void headers.delete(name.toLowerCase()),
      response: (code: number) => void (status = code),
    },
  });
  engine.global.set('npl_random', random);
  engine.doStringSync('math.random = function() return npl_random end');
  engine.doStringSync(script);
  return status;
}

/**
 * An L4 DataScript on a connection whose ClientHello names `sni` (undefined: a ClientHello with no
 * server name; null: not TLS at all). The pool group it selected, or undefined when it closed the
 * connection.
 */
export function runL4Script(script: string, sni: string | undefined | null): string | undefined {
  let selected: string | undefined;
  let closed = false;
  const hello = sni === null ? 'GET / HTTP/1.1\r\n' : { sni };
  engine.global.set('npl_tls', {
    get_req_buffer_size: () => 20,
    sanity_check: (p: unknown) => typeof p === 'object',
    parse_record: (p: unknown) => p,
    get_sni: (h: { sni?: string }) => h.sni,
  });
  engine.doStringSync('require = function(name) if name == "Default-TLS" then return npl_tls end end');
  engine.global.set('avi', {
    l4: { collect: () => 20, read: () => hello, ds_done: () => undefined },
    vs: { close_conn: () => void (closed = true) },
    poolgroup: { select: (name: string) => void (selected = name) },
  });
  engine.doStringSync(script);
  return closed ? undefined : selected;
}
