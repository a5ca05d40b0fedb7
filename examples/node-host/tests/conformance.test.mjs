// Every conformance case through the Node host (Extism JS SDK, `reconcile` export): the plan must
// equal the one the real upstream controller made, as a JSON value (as internal/jsoncmp compares).
import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { loadOrdinal } from '../ordinal.mjs';
import { loadCases, jsonDiff } from './helpers.mjs';

let ord;
let cases;
before(async () => {
  [ord, cases] = await Promise.all([loadOrdinal(), loadCases()]);
});
after(() => ord?.close());

test('describe handshake', () => {
  assert.equal(ord.describe.abi, 1);
  assert.equal(ord.describe.module, 'ordinal');
  assert.equal(ord.describe.kubernetesVersion, 'v1.37.2');
});

test('conformance cases', async (t) => {
  assert.ok(cases.length >= 500, `only ${cases.length} conformance cases found`);
  const failures = [];
  for (const c of cases) {
    const plan = await ord.reconcile(c.snapshot);
    const d = jsonDiff(c.plan, plan);
    if (d) failures.push(`${c.name}: ${d}`);
  }
  t.diagnostic(`${cases.length - failures.length} passed, ${failures.length} failed of ${cases.length} conformance cases`);
  assert.deepEqual(failures, []);
  assert.equal(ord.stats.discardedAfterError, 0);
});
