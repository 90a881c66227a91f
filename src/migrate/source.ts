/**
 * What a vendor's folder offers `npl-lb migrate <from>` (its `Vendor.migrations`): the controller
 * it migrates from, how that controller's settings are read from the command's arguments, and how
 * its custom resources become npl-lb objects. The command (src/main/migrate.ts) names no vendor.
 */
import type { ObjectsMigration, SourceObject } from './objects.ts';
import type { Migration } from './result.ts';

export interface MigrationSource {
  /** The word after `npl-lb migrate`. */
  from: string;
  /** The controller's name in notes and reports. */
  product: string;
  /** Usage lines, each after `npl-lb migrate `. */
  usage: readonly string[];
  /**
   * The settings, from the arguments after `migrate <from>` (its options taken out); `documents`
   * reads a YAML file as the command reads every file (limits, one line on a bad one).
   */
  settings(args: readonly string[], documents: (file: string) => unknown[]): { m: Migration; source: string };
  /** The custom resources given with `-f`, as npl-lb objects (`ingressClass`: of the Ingresses made). */
  objects(objects: readonly SourceObject[], ingressClass: string): ObjectsMigration;
}
