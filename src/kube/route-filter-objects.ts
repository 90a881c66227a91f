/**
 * The filters of an HTTPRoute rule or backendRef (gRPC routes take a subset of them), as the
 * schema reads them: header modifiers, redirects, URL rewrites, CORS and request mirrors; fields past what npl-lb
 * reads are kept (`loose`) so that the source can refuse them by name. Values are checked at the
 * validation boundary (src/source/gateway/route-filters.ts), not here.
 */
import { z } from 'zod';

const headerChange = z.object({ name: z.string(), value: z.string() }).loose();
const headerModifier = z
  .object({
    set: z.array(headerChange).default([]),
    add: z.array(headerChange).default([]),
    remove: z.array(z.string()).default([]),
  })
  .loose();
const pathModifier = z
  .object({
    type: z.enum(['ReplaceFullPath', 'ReplacePrefixMatch']),
    replaceFullPath: z.string().optional(),
    replacePrefixMatch: z.string().optional(),
  })
  .loose();

/** A reference to a Service port (the Gateway API's BackendObjectReference): a backendRef's, a mirror's. */
export const objectRefSchema = z
  .object({
    group: z.string().default(''),
    kind: z.string().default('Service'),
    name: z.string(),
    namespace: z.string().optional(),
    port: z.number().int().optional(),
  })
  .loose();

export const httpRouteFilterSchema = z
  .object({
    type: z.string(),
    requestHeaderModifier: headerModifier.optional(),
    responseHeaderModifier: headerModifier.optional(),
    requestRedirect: z
      .object({
        scheme: z.string().optional(),
        hostname: z.string().optional(),
        path: pathModifier.optional(),
        port: z.number().int().optional(),
        statusCode: z.number().int().default(302),
      })
      .loose()
      .optional(),
    urlRewrite: z
      .object({ hostname: z.string().optional(), path: pathModifier.optional() })
      .loose()
      .optional(),
    cors: z
      .object({
        allowOrigins: z.array(z.string()).default([]),
        allowMethods: z.array(z.string()).default([]),
        allowHeaders: z.array(z.string()).default([]),
        exposeHeaders: z.array(z.string()).default([]),
        allowCredentials: z.boolean().default(false),
        // The CRD's default; an API server without defaulting may leave it out.
        maxAge: z.number().int().default(5),
      })
      .loose()
      .optional(),
    // A copy of each request to a second backend (its answer thrown away): all of them, or the
    // share `percent` or `fraction` says.
    requestMirror: z
      .object({
        backendRef: objectRefSchema,
        percent: z.number().int().optional(),
        fraction: z
          .object({ numerator: z.number().int(), denominator: z.number().int().default(100) })
          .loose()
          .optional(),
      })
      .loose()
      .optional(),
  })
  .loose();
export type HttpRouteFilter = z.infer<typeof httpRouteFilterSchema>;
