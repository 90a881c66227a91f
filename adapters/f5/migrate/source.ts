/** Migrating from CIS, as the BIG-IP vendor offers it to `npl-lb migrate cis` (src/migrate/source.ts). */
import type { MigrationSource } from '../../../src/migrate/source.ts';
import { ErrorCodes, NplError } from '../../../src/runtime/errors.ts';
import { migrateCis } from './cis.ts';
import { migrateCisObjects } from './cis-objects.ts';
import { migrateCisDocument } from './cis-values.ts';

export const CIS_MIGRATION: MigrationSource = {
  from: 'cis',
  product: 'CIS',
  usage: [
    'cis <CIS Helm values.yaml | CIS Deployment.yaml>',
    'cis -- --bigip-url=... --bigip-partition=... [CIS flags]',
    'cis -f <VirtualServers, TransportServers> ... [--ingress-class=npl-lb]',
  ],
  settings(args, documents) {
    if (args[0] === '--') return { m: migrateCis(args.slice(1)), source: 'CIS flags' };
    if (args.length !== 1 || args[0]!.startsWith('--'))
      throw new NplError(ErrorCodes.FLAG_INVALID, "migrate cis takes one file, or its flags after '--'");
    for (const doc of documents(args[0]!)) {
      const m = migrateCisDocument(doc);
      if (m) return { m, source: `CIS settings in ${args[0]!}` };
    }
    throw new NplError(
      ErrorCodes.CONFIG_INVALID,
      `${args[0]!} holds neither CIS Helm values (args:) nor a Deployment with container args`,
    );
  },
  objects: (objects, ingressClass) => migrateCisObjects(objects, ingressClass),
};
