/**
 * A demo takes the first loopback range (127.N.x, N from 1 to 9) no other demo holds, so two demos
 * (two clones' `npm start`, or a demo and the suite's demo test) never collide; none free is said.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:net';
import { it } from 'node:test';
import { demoRange, firstPod, freeDemoRange } from '../../../src/main/demo-range.ts';

const PORT = 18999;

const hold = (host: string): Promise<Server> =>
  new Promise((resolve, reject) => {
    const s = createServer();
    s.once('error', reject);
    s.listen(PORT, host, () => resolve(s));
  });

it('the first range whose app address is free; a held one is passed over; none free is undefined', async (t) => {
  const one = await freeDemoRange(PORT);
  assert.equal(one?.n, 1);
  // Claimed until released: a demo starting meanwhile takes the next range, not the same one.
  const two = await freeDemoRange(PORT);
  assert.equal(two?.n, 2);
  await one!.release();
  await two!.release();
  assert.equal((await freeDemoRange(PORT).then(async (r) => (await r?.release(), r)))?.n, 1);
  const held = [await hold(firstPod(demoRange(1)))];
  t.after(() => Promise.all(held.map((s) => new Promise((r) => s.close(() => r(undefined))))));
  const next = await freeDemoRange(PORT);
  assert.equal(next?.n, 2);
  await next!.release();
  assert.deepEqual(
    [next!.node(3), next!.podCidr(1), next!.cidr, next!.vip(7)],
    ['127.2.10.3', '127.2.41.0/24', '127.2.30.0/24', '127.2.30.7'],
  );
  for (let n = 2; n <= 9; n++) held.push(await hold(demoRange(n).vip(1)));
  assert.equal(await freeDemoRange(PORT), undefined);
});
