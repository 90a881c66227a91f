/**
 * The sandbox's fixed routes: health, /version, discovery and the OpenAPI documents.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { apiGroup, apiGroupList, apiResourceList, coreVersions, SERVER_VERSION } from './discovery.ts';
import { send } from './http-util.ts';
import type { OpenApi } from './openapi.ts';
import { OPENAPI_V2_PROTOBUF, OPENAPI_V2_PROTOBUF_RESPONSE } from './openapi-v2-proto.ts';
import type { TypeCatalog } from './catalog.ts';
import { customV3Doc, customV3Keys } from './crd/openapi-v3.ts';
import { ApiError, notFoundPath } from './status.ts';

/** Answers a GET on a fixed route; false when the path is not one (a resource path). */
export function serveStatic(
  path: string,
  req: IncomingMessage,
  res: ServerResponse,
  openapi: OpenApi,
  address: string,
  types: TypeCatalog,
): boolean {
  const parts = path.split('/').filter(Boolean);
  switch (path) {
    case '/healthz':
    case '/readyz':
    case '/livez':
      res.writeHead(200, { 'Content-Type': 'text/plain; charset=utf-8' });
      res.end('ok');
      return true;
    case '/version':
      send(res, 200, SERVER_VERSION);
      return true;
    case '/api':
      send(res, 200, coreVersions(address));
      return true;
    case '/apis':
      send(res, 200, apiGroupList(types.all()));
      return true;
    case '/openapi/v2': {
      const accept = req.headers.accept ?? '';
      if (accept.includes(OPENAPI_V2_PROTOBUF)) {
        res.writeHead(200, {
          'Content-Type': OPENAPI_V2_PROTOBUF_RESPONSE,
          'Cache-Control': 'no-cache, private',
        });
        res.end(openapi.v2Protobuf());
      } else if (accept && !/application\/json|\*\/\*/.test(accept)) {
        send(
          res,
          406,
          new ApiError(
            406,
            'NotAcceptable',
            `only application/json and ${OPENAPI_V2_PROTOBUF} are served for /openapi/v2`,
          ).status,
        );
      } else send(res, 200, openapi.doc);
      return true;
    }
    case '/openapi/v3': {
      const root = openapi.v3Root();
      Object.assign(root.paths as object, customV3Keys(types.all(), openapi));
      send(res, 200, root);
      return true;
    }
  }
  if (parts[0] === 'openapi' && parts[1] === 'v3') {
    const key = parts.slice(2).join('/');
    const doc = openapi.v3Doc(key) ?? customV3Doc(types.all(), key, openapi);
    if (doc === undefined) throw notFoundPath();
    send(res, 200, doc);
    return true;
  }
  if (parts[0] === 'api' && parts.length === 2) {
    const list = apiResourceList(types.all(), '', parts[1]!);
    if (!list) throw notFoundPath();
    send(res, 200, list);
    return true;
  }
  if (parts[0] === 'apis' && parts.length === 2) {
    const g = apiGroup(types.all(), parts[1]!);
    if (!g) throw notFoundPath();
    send(res, 200, g);
    return true;
  }
  if (parts[0] === 'apis' && parts.length === 3) {
    const list = apiResourceList(types.all(), parts[1]!, parts[2]!);
    if (!list) throw notFoundPath();
    send(res, 200, list);
    return true;
  }
  return false;
}
