/** Migrating from AKO, as the Avi vendor offers it to `npl-lb migrate ako` (src/migrate/source.ts). */
import type { MigrationSource } from '../../../src/migrate/source.ts';
import { ErrorCodes, NplError } from '../../../src/runtime/errors.ts';
import { migrateAko } from './ako.ts';
import { migrateAkoObjects } from './ako-objects.ts';

export const AKO_MIGRATION: MigrationSource = {
  from: 'ako',
  product: 'AKO',
  usage: [
    'ako <AKO values.yaml>',
    'ako -f <HTTPRules, HostRules, AviInfraSettings, and their Ingresses or Routes> ...',
  ],
  settings(args, documents) {
    if (args.length !== 1)
      throw new NplError(
        ErrorCodes.FLAG_INVALID,
        'migrate ako takes one file: the values.yaml of the AKO release',
      );
    const [doc] = documents(args[0]!);
    if (typeof doc !== 'object' || doc === null || Array.isArray(doc))
      throw new NplError(ErrorCodes.CONFIG_INVALID, `${args[0]!} is not a values file (a YAML mapping)`);
    return { m: migrateAko(doc), source: `AKO values ${args[0]!}` };
  },
  objects: (objects) => migrateAkoObjects(objects),
};
