/**
 * ListenerSet (gateway.networking.k8s.io/v1, standard since v1.6, GEP-1713): listeners an
 * application team attaches to a Gateway that allows it, as the controller's cache keeps them.
 * What npl-lb does with each field is decided in source/gateway/listener-sets.ts.
 */
import { z } from 'zod';
import { condition, GATEWAY_GROUP, gatewayMeta, listenerSchema } from './gateway-objects.ts';

export const listenerSetSchema = z
  .object({
    metadata: gatewayMeta,
    spec: z
      .object({
        parentRef: z
          .object({
            group: z.string().default(GATEWAY_GROUP),
            kind: z.string().default('Gateway'),
            name: z.string(),
            namespace: z.string().optional(),
          })
          .loose(),
        listeners: z.array(listenerSchema).default([]),
      })
      .loose(),
    status: z
      .object({
        conditions: z.array(condition).default([]),
        listeners: z
          .array(z.object({ name: z.string(), conditions: z.array(condition).default([]) }).loose())
          .default([]),
      })
      .loose()
      .default({ conditions: [], listeners: [] }),
  })
  .loose();
export type ListenerSet = z.infer<typeof listenerSetSchema>;
