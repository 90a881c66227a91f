/**
 * BIG-IP's persistence read back per pool from the virtual servers that hold it: an L4 service's
 * `persistenceMethods` for its pool and for the pools of its TLS passthrough (SNI) policy or its
 * Terminate SNI iRule, an HTTP
 * rule's persist action for the pool it forwards to; services that disagree are `mixed`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { usedPool, withinApp } from '../../../../adapters/f5/declaration.ts';
import { sniRule } from '../../../../adapters/f5/tls-terminate.ts';
import { persistenceOnDevice } from '../../../../adapters/f5/persistence-read.ts';

const forward = (event: string, pool: string, persist?: Record<string, unknown>) => ({
  actions: [
    ...(persist ? [{ type: 'persist', event: 'request', ...persist }] : []),
    { type: 'forward', event, select: { pool: { use: pool } } },
  ],
});

describe('BIG-IP persistence read from the virtual servers', () => {
  it('L4 pools, TLS passthrough pools, HTTP rules; disagreement is mixed', () => {
    const app = {
      class: 'Application',
      l4: { class: 'Service_TCP', pool: 'plain', persistenceMethods: ['source-address'] },
      sni: { class: 'Service_TCP', persistenceMethods: ['source-address'], policyEndpoint: 'sni_policy' },
      sni_policy: { class: 'Endpoint_Policy', rules: [forward('ssl-client-hello', 'passthrough')] },
      none: { class: 'Service_TCP', pool: 'bare', persistenceMethods: [] },
      // TLS ended here: the pools its SNI iRule chooses persist as the service does.
      term: {
        class: 'Service_TCP',
        persistenceMethods: ['source-address'],
        serverTLS: 'term_tls',
        iRules: ['term_sni'],
      },
      term_sni: {
        class: 'iRule',
        iRule: sniRule(
          [{ host: 'a.example.com', pool: 'terminated', source: 's' }],
          withinApp('t').paths('term'),
        ),
      },
      http_policy: {
        class: 'Endpoint_Policy',
        rules: [
          forward('request', 'cookie', { cookieInsert: { name: 'x', expiry: '1d' } }),
          forward('request', 'client', { sourceAddress: { timeout: 1800 } }),
          forward('request', 'nothing', { disable: {} }),
          forward('request', 'bare', { cookieInsert: { name: 'y', expiry: '1d' } }),
        ],
      },
    };
    assert.deepEqual(Object.fromEntries(persistenceOnDevice(app, usedPool)), {
      plain: 'SourceIP',
      passthrough: 'SourceIP',
      terminated: 'SourceIP',
      bare: 'mixed',
      cookie: { cookie: 'x', expiry: '1d' },
      client: 'SourceIP',
      nothing: 'none',
    });
  });
});
