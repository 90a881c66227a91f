/**
 * The simulators `npl-lb sim <kind>` runs: named once, for the command itself and for the top-level
 * `--help` (which must not load the simulators to list them).
 */
export const SIM_KINDS = ['avi', 'bigip', 'dataplane'] as const;
