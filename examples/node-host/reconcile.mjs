#!/usr/bin/env node
// node reconcile.mjs [-f snapshot.json|-] [--describe] [--module m.wasm] [--timeout-ms N] [--max-pages N]
//
// Prints the plan for a snapshot exactly as the module returned it, followed by a newline: the same
// bytes as `ordinal reconcile --compact` (the Go host). Exit codes are the Go CLI's:
//   0 plan printed; 1 usage error or unreadable input; 2 the snapshot was rejected (the error plan is
//   printed); 3 the sync failed the way upstream's would (SyncFailed, plan printed); 4 the module
//   failed to load, trapped, timed out or ran out of memory (message on stderr, nothing on stdout).
import { readFile } from 'node:fs/promises';
import { parseArgs } from 'node:util';
import { loadOrdinal, OrdinalError, DEFAULT_MAX_PAGES, DEFAULT_TIMEOUT_MS } from './ordinal.mjs';

const EXIT = { ok: 0, usage: 1, rejected: 2, syncFailed: 3, moduleFailure: 4 };
const usage = `usage: node reconcile.mjs [-f snapshot.json|-] [--describe] [--module m.wasm] [--timeout-ms N] [--max-pages N]
Reads a snapshot (ABI v1, abi/README.md) from the file or standard input and prints the module's plan.
  -f, --file        snapshot file, or - for standard input (default -)
      --describe    print the module's describe document instead
      --module      the .wasm to run (default: host/embedded/ordinal.wasm)
      --timeout-ms  per-call time limit, instantiation included (default ${DEFAULT_TIMEOUT_MS}; 0 = none, runs on the main thread)
      --max-pages   guest memory limit in 64 KiB pages (default ${DEFAULT_MAX_PAGES})
Exit codes: 0 plan printed; 1 usage error or unreadable input; 2 snapshot rejected (error plan printed);
3 sync failed as upstream's would (plan printed); 4 module failed to load, trapped, timed out or ran out of memory.`;

function fail(code, msg) {
  process.stderr.write(`reconcile.mjs: ${msg}\n`);
  process.exitCode = code;
}

async function readStdin() {
  const chunks = [];
  for await (const c of process.stdin) chunks.push(c);
  return Buffer.concat(chunks);
}

function nonNegativeInt(name, v) {
  if (!/^\d+$/.test(v)) throw new Error(`--${name} wants a non-negative integer, got ${JSON.stringify(v)}`);
  return Number(v);
}

async function main() {
  let args;
  let timeoutMs, maxPages;
  try {
    args = parseArgs({
      options: {
        file: { type: 'string', short: 'f', default: '-' },
        describe: { type: 'boolean', default: false },
        module: { type: 'string' },
        'timeout-ms': { type: 'string', default: String(DEFAULT_TIMEOUT_MS) },
        'max-pages': { type: 'string', default: String(DEFAULT_MAX_PAGES) },
        help: { type: 'boolean', short: 'h', default: false },
      },
      allowPositionals: false,
    }).values;
    timeoutMs = nonNegativeInt('timeout-ms', args['timeout-ms']);
    maxPages = nonNegativeInt('max-pages', args['max-pages']);
  } catch (e) {
    return fail(EXIT.usage, `${e.message}\n${usage}`);
  }
  if (args.help) {
    process.stdout.write(usage + '\n');
    return;
  }

  let snapshot;
  if (!args.describe) {
    try {
      snapshot = args.file === '-' ? await readStdin() : await readFile(args.file);
    } catch (e) {
      return fail(EXIT.usage, `reading snapshot: ${e.message}`);
    }
  }

  let ord;
  try {
    ord = await loadOrdinal({ path: args.module, timeoutMs, maxPages });
  } catch (e) {
    return fail(EXIT.moduleFailure, describeFailure(e));
  }
  try {
    if (args.describe) {
      await write(ord.describeBytes);
      return;
    }
    let plan;
    try {
      plan = await ord.reconcile(snapshot);
    } catch (e) {
      return fail(EXIT.moduleFailure, describeFailure(e));
    }
    let parsed;
    try {
      parsed = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(plan));
    } catch (e) {
      return fail(EXIT.moduleFailure, `module returned an undecodable plan: ${e.message}`);
    }
    await write(plan);
    const err = parsed?.error;
    if (err) {
      if (err.code === 'SyncFailed') return fail(EXIT.syncFailed, `sync failed: ${err.message}`);
      return fail(EXIT.rejected, `snapshot rejected (${err.code}): ${err.path ? err.path + ': ' : ''}${err.message}`);
    }
  } finally {
    await ord.close();
  }
}

function describeFailure(e) {
  if (e instanceof OrdinalError) {
    const hint = e.kind === 'trap' ? ' (the module\'s own output, e.g. TinyGo\'s "panic: ...", is discarded; set EXTISM_ENABLE_WASI_OUTPUT=1 to see it)' : '';
    return `module failure (${e.kind}): ${e.message}${hint}`;
  }
  return `module failure: ${e?.stack ?? e}`;
}

// The plan bytes unmodified, then "\n", as `ordinal reconcile --compact` prints them.
function write(bytes) {
  return new Promise((resolve, reject) => {
    process.stdout.write(Buffer.concat([bytes, Buffer.from('\n')]), (err) => (err ? reject(err) : resolve()));
  });
}

await main();
// Exit now rather than when the event loop drains: the SDK (2.0.0-rc13) leaves each call's timeout
// timer pending, which would keep the process alive for --timeout-ms after the work is done.
process.exit();
