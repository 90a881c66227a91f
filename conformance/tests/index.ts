/** Every transcribed test, in the order the harness runs them. */
import type { ConformanceTest } from '../harness/suite.ts';
import { gatewayTests } from './gateway.ts';
import { refTests } from './httproute-refs.ts';
import { routingTests } from './httproute-routing.ts';

export const ALL_TESTS: ConformanceTest[] = [...gatewayTests, ...routingTests, ...refTests];
