/**
 * The Gateway API conformance run on HAProxy (runtime transport): every transcribed core test, and every
 * extended test of a feature the GatewayClass claims, passes with real traffic; the report is
 * upstream's shape and the committed one agrees (test/support/conformance-adapter.ts). A file of
 * its own so that it runs beside the other transport's.
 */
import { describe, it } from 'node:test';
import { adapterCaseName, checkAdapterRun } from '../support/conformance-adapter.ts';
import { haproxyMissing, opensslMissing } from '../support/haproxy.ts';

describe(
  'Gateway API conformance on HAProxy (runtime transport)',
  { skip: haproxyMissing() || opensslMissing() },
  () => {
    it(adapterCaseName('haproxy-runtime'), () => checkAdapterRun('haproxy-runtime'));
  },
);
