// The host's error handling: malformed snapshots give error plans (never an exception), module
// failures (trap, timeout, out of memory, a failed handshake) are OrdinalErrors, and the CLI maps
// both to the Go CLI's exit codes.
import { test, describe, after } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, writeFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { loadOrdinal, limitMemory, OrdinalError } from '../ordinal.mjs';
import { buildModule } from './wasm-builder.mjs';
import { cliPath } from './helpers.mjs';

const tmp = mkdtempSync(join(tmpdir(), 'ordinal-node-'));
after(() => rmSync(tmp, { recursive: true, force: true }));

const validSet = '{"metadata":{"name":"web","namespace":"default","uid":"u1"},"spec":{"replicas":1,"selector":{"matchLabels":{"app":"web"}},"template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"c","image":"i"}]}}}}';

// [name, snapshot, error.code, error.path (or undefined)]
const malformed = [
  ['empty input', '', 'InvalidJSON'],
  ['truncated', '{"abi":1,', 'InvalidJSON'],
  ['junk', 'not json', 'InvalidJSON'],
  ['two values', '{} {}', 'InvalidJSON'],
  ['abi missing', '{"now":"2026-05-01T12:00:00Z"}', 'UnsupportedABI'],
  ['abi 2', '{"abi":2}', 'UnsupportedABI'],
  ['abi a string', '{"abi":"1"}', 'UnsupportedABI'],
  ['unknown gate', `{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":${validSet},"features":{"NoSuchGate":true}}`, 'UnknownFeatureGate', 'features.NoSuchGate'],
  ['no statefulSet', '{"abi":1,"now":"2026-05-01T12:00:00Z"}', 'InvalidSnapshot'],
  ['no now', `{"abi":1,"statefulSet":${validSet}}`, 'InvalidSnapshot'],
  ['bad time', `{"abi":1,"now":"yesterday","statefulSet":${validSet}}`, 'InvalidSnapshot'],
  ['replicas a string', `{"abi":1,"now":"2026-05-01T12:00:00Z","statefulSet":${validSet.replace('"replicas":1', '"replicas":"one"')}}`, 'InvalidSnapshot', 'statefulSet.spec.replicas'],
];

describe('malformed snapshots give error plans', async () => {
  const ord = await loadOrdinal();
  after(() => ord.close());
  for (const [name, snapshot, code, path] of malformed) {
    test(name, async () => {
      const plan = JSON.parse(new TextDecoder().decode(await ord.reconcile(snapshot)));
      assert.equal(plan.abi, 1);
      assert.deepEqual(plan.actions, []);
      assert.deepEqual(plan.events, []);
      assert.equal(plan.error?.code, code, JSON.stringify(plan.error));
      assert.ok(plan.error.message.length > 0);
      if (path !== undefined) assert.equal(plan.error.path, path);
    });
  }
  test('the instance keeps serving after error plans', () => {
    assert.equal(ord.stats.instantiated, 1);
    assert.equal(ord.stats.discardedAfterError, 0);
  });
});

describe('module failures are errors, and the failed instance is replaced', () => {
  const cases = [
    // [module behaviour, host options, expected kind, message part]
    ['trap', { timeoutMs: 5000 }, 'trap', 'module trapped: unreachable'],
    ['trap', { timeoutMs: 0 }, 'trap', 'module trapped: unreachable'],
    ['loop', { timeoutMs: 300 }, 'timeout', 'reconcile exceeded the 300 ms timeout'],
    ['oom', { timeoutMs: 0, maxPages: 32 }, 'out-of-memory', 'out of memory (32 of 32 pages)'],
    ['oom', { timeoutMs: 5000, maxPages: 32 }, 'trap', 'memory limit 32 pages'],
  ];
  for (const [behaviour, opts, kind, part] of cases) {
    test(`${behaviour} (timeoutMs ${opts.timeoutMs})`, async () => {
      const ord = await loadOrdinal({ wasm: buildModule({ reconcile: behaviour }), ...opts });
      try {
        for (let i = 1; i <= 2; i++) {
          await assert.rejects(ord.reconcile('{"abi":1}'), (e) => {
            assert.ok(e instanceof OrdinalError, String(e));
            assert.equal(e.kind, kind, e.message);
            assert.equal(e.op, 'reconcile');
            assert.ok(e.message.includes(part), e.message);
            return true;
          });
          assert.equal(ord.stats.instantiated, i, 'each call after a failure gets a fresh instance');
          assert.equal(ord.stats.discardedAfterError, i);
        }
      } finally {
        await ord.close();
      }
    });
  }
});

describe('describe handshake and module checks', () => {
  const refused = [
    ['abi 2', { describe: '{"abi":2,"module":"x"}' }, 'unsupported-abi', 'module speaks ABI 2, this host speaks 1'],
    ['abi missing', { describe: '{"module":"x"}' }, 'unsupported-abi', 'module speaks ABI undefined'],
    ['no describe output', { describe: null }, 'bad-module', 'export "describe" set no output'],
    ['describe not JSON', { describe: 'hello' }, 'bad-module', 'describe did not return JSON'],
  ];
  for (const [name, spec, kind, part] of refused) {
    test(name, async () => {
      await assert.rejects(loadOrdinal({ wasm: buildModule(spec) }), (e) => {
        assert.equal(e.kind, kind, e.message);
        assert.equal(e.op, 'describe');
        assert.ok(e.message.includes(part), e.message);
        return true;
      });
    });
  }
  test('not wasm', async () => {
    await assert.rejects(loadOrdinal({ wasm: new TextEncoder().encode('hello') }), /bad magic/);
  });
  test('initial memory above the limit', () => {
    assert.throws(() => limitMemory(buildModule(), 0), /needs 1 pages of memory at start, above the limit of 0/);
  });
  test('the limit becomes the memory maximum', async () => {
    const m = await WebAssembly.compile(limitMemory(buildModule(), 7));
    const inst = await WebAssembly.instantiate(m, { 'extism:host/env': { alloc() {}, store_u8() {}, output_set() {} } });
    assert.equal(inst.exports.memory.grow(6), 1);
    assert.throws(() => inst.exports.memory.grow(1), RangeError);
  });
});

function cli(args, input) {
  return spawnSync(process.execPath, [cliPath, ...args], { input, encoding: 'utf8', timeout: 30_000 });
}

describe('reconcile.mjs', () => {
  test('an error plan is printed, exit 2', () => {
    const r = cli([], '{"abi":2}');
    assert.equal(r.status, 2, r.stderr);
    assert.equal(JSON.parse(r.stdout).error.code, 'UnsupportedABI');
    assert.ok(r.stdout.endsWith('}\n'));
    assert.match(r.stderr, /snapshot rejected \(UnsupportedABI\)/);
  });
  test('a trap is exit 4 with a message, nothing on stdout', () => {
    const mod = join(tmp, 'trap.wasm');
    writeFileSync(mod, buildModule({ reconcile: 'trap' }));
    const r = cli(['--module', mod], '{"abi":1}');
    assert.equal(r.status, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /module failure \(trap\): reconcile: module trapped: unreachable/);
  });
  test('a timeout is exit 4 with a message', () => {
    const mod = join(tmp, 'loop.wasm');
    writeFileSync(mod, buildModule({ reconcile: 'loop' }));
    const r = cli(['--module', mod, '--timeout-ms', '300'], '{"abi":1}');
    assert.equal(r.status, 4, r.stderr);
    assert.equal(r.stdout, '');
    assert.match(r.stderr, /module failure \(timeout\): reconcile: reconcile exceeded the 300 ms timeout/);
  });
  test('a refused module is exit 4', () => {
    const mod = join(tmp, 'abi2.wasm');
    writeFileSync(mod, buildModule({ describe: '{"abi":2}' }));
    const r = cli(['--module', mod], '{"abi":1}');
    assert.equal(r.status, 4);
    assert.match(r.stderr, /module failure \(unsupported-abi\)/);
  });
  test('unreadable input and bad flags are exit 1', () => {
    assert.equal(cli(['-f', join(tmp, 'missing.json')]).status, 1);
    assert.equal(cli(['--timeout-ms', 'soon'], '{}').status, 1);
    assert.equal(cli(['extra'], '{}').status, 1);
  });
  test('--describe prints the describe document', () => {
    const r = cli(['--describe']);
    assert.equal(r.status, 0, r.stderr);
    assert.equal(JSON.parse(r.stdout).abi, 1);
  });
});
