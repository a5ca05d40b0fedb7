// Ordinal's reconcile module hosted from Node.js through the Extism JavaScript SDK.
//
// Everything here follows abi/README.md ("Writing a host in another language"); no Go is involved.
// The module is called only through its Extism-PDK exports (`describe`, `reconcile`): the SDK's
// kernel carries the snapshot in and the plan out, and the SDK runs the module's `_initialize`.
//
//   const ord = await loadOrdinal({ path: '../../host/embedded/ordinal.wasm' });
//   const plan = await ord.reconcile(snapshotBytes); // Uint8Array: the module's bytes, unmodified
//   await ord.close();
//
// Limits, as the ABI asks of every host:
//   * memory: the module's own memory section is given a maximum (`maxPages`, default 4096 pages =
//     256 MiB) before it is compiled, so the guest's memory.grow fails past it and TinyGo traps
//     with "out of memory". (The SDK's `memory.maxPages` option bounds only the Extism kernel's
//     input/output blocks, not the guest's linear memory; it is set too.)
//   * time: the plugin runs in a worker thread (`runInWorker`), so a call that runs past `timeoutMs`
//     (default 10 s) can have its worker terminated. The host times calls itself: the SDK's own call
//     timeout restarts the worker and re-instantiates the module within that same budget, and when the
//     machine is loaded and the restart is slower than the budget the call never settles ("Plugin
//     will hang"). The SDK's timeout bounds only instantiation (`instantiateTimeoutMs`, default 30 s or
//     timeoutMs if larger: a module whose `_initialize` never returns).
//   * failures: after a trap or a timeout the plugin is discarded and a fresh one made for the next
//     call (ABI §6). A snapshot problem is never a failure: it comes back as an error plan.

import createPlugin from '@extism/extism';
import { readFile } from 'node:fs/promises';

export const ABI_VERSION = 1;
export const DEFAULT_MAX_PAGES = 4096; // 256 MiB, the Go host's default
export const DEFAULT_TIMEOUT_MS = 10_000; // the Go host's default
export const DEFAULT_INSTANTIATE_TIMEOUT_MS = 30_000;
export const DEFAULT_RECYCLE_ABOVE_PAGES = 1024; // 64 MiB of guest memory, the Go host's default
export const DEFAULT_RECYCLE_AFTER_BYTES = 4 << 20; // input volume, when the memory size is out of sight

quietWasiWarning();

const ALLOWED_IMPORT_MODULES = new Set(['wasi_snapshot_preview1', 'extism:host/env']);
const REQUIRED_EXPORTS = ['describe', 'reconcile'];

/** A failure of the module or of the host, never a verdict on a snapshot (those are error plans). */
export class OrdinalError extends Error {
  /**
   * @param {'bad-module'|'unsupported-abi'|'trap'|'out-of-memory'|'timeout'|'closed'} kind
   * @param {string} op 'load' | 'describe' | 'reconcile'
   */
  constructor(kind, op, message, cause) {
    super(`${op}: ${message}`, cause ? { cause } : undefined);
    this.name = 'OrdinalError';
    this.kind = kind;
    this.op = op;
  }
}

/**
 * Loads a module and performs the describe handshake.
 * @param {object} opts
 * @param {string} [opts.path] the .wasm file (default: the embedded module of this repository)
 * @param {Uint8Array} [opts.wasm] the module bytes, instead of path
 * @param {number} [opts.maxPages] guest memory limit in 64 KiB pages
 * @param {number} [opts.timeoutMs] per-call time limit; 0 runs the plugin on the calling thread, unbounded
 * @param {number} [opts.instantiateTimeoutMs] time limit of an instantiation in a worker
 * @param {number} [opts.recycleAbovePages] replace the instance after a call that left its memory larger
 *   than this (TinyGo's GC keeps large dead buffers, so an instance fed big snapshots only grows until
 *   it thrashes and runs out of memory; ABI §7). Only on the calling thread (timeoutMs 0): the SDK
 *   gives no access to a worker's instance, so there...
 * @param {number} [opts.recycleAfterBytes] ...the instance is replaced once this much input has gone
 *   through it (1000 pods, 2.5 MB, grow a reused instance by about 30 MB per call).
 * @param {boolean} [opts.wasiOutput] forward the module's stdout/stderr to this process's
 *   (default: off unless EXTISM_ENABLE_WASI_OUTPUT is set)
 */
export async function loadOrdinal(opts = {}) {
  const maxPages = opts.maxPages ?? DEFAULT_MAX_PAGES;
  const timeoutMs = opts.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  let bytes = opts.wasm;
  if (!bytes) {
    const path = opts.path ?? new URL('../../host/embedded/ordinal.wasm', import.meta.url);
    bytes = await readFile(path);
  }
  let module;
  try {
    module = await WebAssembly.compile(limitMemory(new Uint8Array(bytes), maxPages));
  } catch (e) {
    if (e instanceof OrdinalError) throw e;
    throw new OrdinalError('bad-module', 'load', `not a valid WebAssembly module: ${e.message}`, e);
  }
  for (const imp of WebAssembly.Module.imports(module)) {
    if (!ALLOWED_IMPORT_MODULES.has(imp.module)) {
      throw new OrdinalError('bad-module', 'load', `module imports ${imp.module}.${imp.name}; only wasi_snapshot_preview1 and extism:host/env are allowed`);
    }
  }
  const exports = new Map(WebAssembly.Module.exports(module).map((e) => [e.name, e.kind]));
  for (const name of REQUIRED_EXPORTS) {
    if (exports.get(name) !== 'function') {
      throw new OrdinalError('bad-module', 'load', `module has no Extism export "${name}"`);
    }
  }
  if (exports.get('memory') !== 'memory') {
    throw new OrdinalError('bad-module', 'load', 'module exports no memory named "memory"');
  }
  const ord = new Ordinal(module, {
    maxPages,
    timeoutMs,
    instantiateTimeoutMs: opts.instantiateTimeoutMs ?? Math.max(timeoutMs, DEFAULT_INSTANTIATE_TIMEOUT_MS),
    recycleAfterBytes: opts.recycleAfterBytes ?? DEFAULT_RECYCLE_AFTER_BYTES,
    recycleAbovePages: opts.recycleAbovePages ?? DEFAULT_RECYCLE_ABOVE_PAGES,
    wasiOutput: opts.wasiOutput,
  });
  try {
    const raw = await ord.call('describe', new Uint8Array(0));
    let d;
    try {
      d = JSON.parse(new TextDecoder('utf-8', { fatal: true }).decode(raw));
    } catch (e) {
      throw new OrdinalError('bad-module', 'describe', `describe did not return JSON: ${e.message}`, e);
    }
    if (d === null || typeof d !== 'object' || d.abi !== ABI_VERSION) {
      throw new OrdinalError('unsupported-abi', 'describe', `module speaks ABI ${JSON.stringify(d?.abi)}, this host speaks ${ABI_VERSION}`);
    }
    ord.describe = d;
    ord.describeBytes = raw;
  } catch (e) {
    await ord.close();
    throw e;
  }
  return ord;
}

export class Ordinal {
  #module;
  #cfg;
  #plugin = null; // Promise<Plugin>
  #inputBytes = 0;
  #queue = Promise.resolve(); // one call at a time per instance
  #closed = false;

  constructor(module, cfg) {
    this.#module = module;
    this.#cfg = cfg;
    /** The parsed describe document, and its bytes as the module returned them. */
    this.describe = null;
    this.describeBytes = null;
    /** Counters: calls, fresh instances, instances discarded after a failure, instances recycled. */
    this.stats = { calls: 0, instantiated: 0, discardedAfterError: 0, recycled: 0 };
  }

  /**
   * Runs one reconcile. Resolves to the plan bytes exactly as the module produced them (an error
   * plan for a malformed snapshot); rejects with an OrdinalError only if the module failed.
   * @param {Uint8Array|string} snapshot
   */
  async reconcile(snapshot) {
    const input = typeof snapshot === 'string' ? new TextEncoder().encode(snapshot) : snapshot;
    return this.call('reconcile', input);
  }

  /** Calls an Extism export, serialized per instance. */
  call(name, input) {
    const run = this.#queue.then(() => this.#call(name, input));
    this.#queue = run.catch(() => {});
    return run;
  }

  async #call(name, input) {
    if (this.#closed) throw new OrdinalError('closed', name, 'host is closed');
    this.stats.calls++;
    if (this.#plugin && this.#cfg.timeoutMs > 0 && this.#inputBytes + input.byteLength > this.#cfg.recycleAfterBytes) {
      this.stats.recycled++;
      await this.#discard();
    }
    let plugin;
    try {
      plugin = await this.#instance();
    } catch (e) {
      await this.#discard();
      throw classify(name, e, this.#cfg);
    }
    this.#inputBytes += input.byteLength;
    let out;
    try {
      out = await this.#timed(plugin.call(name, input));
    } catch (e) {
      this.stats.discardedAfterError++;
      const pages = await guestPages(plugin);
      await this.#discard();
      throw classify(name, e, this.#cfg, pages);
    }
    if (out === null) {
      // Both exports always set an output (ABI §2.2); no output is a module bug.
      this.stats.discardedAfterError++;
      await this.#discard();
      throw new OrdinalError('bad-module', name, `export "${name}" set no output`);
    }
    const plan = out.bytes().slice(); // copy: the view belongs to the SDK
    const pages = await guestPages(plugin);
    if (pages !== undefined && pages > this.#cfg.recycleAbovePages) {
      this.stats.recycled++;
      await this.#discard();
    }
    return plan;
  }

  // Races a call with the per-call timeout (in a worker). On timeout the caller discards the plugin,
  // which terminates its worker; the SDK's promise for the call is left unsettled and unreferenced.
  #timed(call) {
    if (!(this.#cfg.timeoutMs > 0)) return call;
    let timer;
    const expired = new Promise((_, reject) => {
      timer = setTimeout(() => reject(new Error('call timed out')), this.#cfg.timeoutMs);
    });
    return Promise.race([call, expired]).finally(() => clearTimeout(timer));
  }

  #instance() {
    if (!this.#plugin) {
      this.stats.instantiated++;
      this.#inputBytes = 0;
      const worker = this.#cfg.timeoutMs > 0;
      this.#plugin = createPlugin(
        { wasm: [{ module: this.#module, name: 'main' }] },
        {
          useWasi: true,
          // The module prints only when it panics (TinyGo writes "panic: ..." to stdout). The SDK can
          // send WASI output to this process's own stdout/stderr or to /dev/null, not to a buffer;
          // undefined lets EXTISM_ENABLE_WASI_OUTPUT=1 turn it on.
          enableWasiOutput: this.#cfg.wasiOutput,
          runInWorker: worker,
          timeoutMs: worker ? this.#cfg.instantiateTimeoutMs : null,
          memory: { maxPages: this.#cfg.maxPages },
          logLevel: 'silent',
        },
      ).then((p) => {
        // From here on calls are timed by #timed, not by the SDK (whose timeout restarts the worker,
        // see the header). The SDK reads this option at every call.
        if (worker) p.opts.timeoutMs = null;
        return p;
      });
    }
    return this.#plugin;
  }

  async #discard() {
    const p = this.#plugin;
    this.#plugin = null;
    if (p) {
      try {
        await (await p).close();
      } catch {
        // a plugin that failed to start or was terminated has nothing left to close
      }
    }
  }

  async close() {
    await this.#queue;
    this.#closed = true;
    await this.#discard();
  }
}

/**
 * Silences Node's one-time "WASI is an experimental feature" warning, which Node 20 emits when the
 * SDK imports node:wasi (on the next tick, so installing this filter while this module is evaluated
 * is early enough). Other warnings are still printed.
 */
function quietWasiWarning() {
  const listeners = process.listeners('warning');
  process.removeAllListeners('warning');
  process.on('warning', (w) => {
    if (w?.name === 'ExperimentalWarning' && /WASI/.test(w.message)) return;
    for (const l of listeners) l(w);
  });
}

// The guest's memory size in pages, when the plugin runs on this thread (a worker's instance is
// out of reach); undefined otherwise.
async function guestPages(plugin) {
  try {
    return (await plugin.getInstance()).exports.memory.buffer.byteLength / 65536;
  } catch {
    return undefined;
  }
}

function classify(op, e, cfg, pages) {
  const msg = String(e?.message ?? e);
  if (/timed out|due to timeout/i.test(msg)) {
    return new OrdinalError('timeout', op, `${op} exceeded the ${cfg.timeoutMs} ms timeout (${msg})`, e);
  }
  // TinyGo traps (unreachable, after printing "panic: runtime error: out of memory") when
  // memory.grow fails at the limit. Without the module's output, a trap with the memory at the
  // limit is taken for that; in a worker the memory size is unknown and the limit is only named.
  if (pages !== undefined && pages + 16 >= cfg.maxPages) {
    return new OrdinalError('out-of-memory', op, `module ran out of memory (${pages} of ${cfg.maxPages} pages): ${msg}`, e);
  }
  const hint = pages === undefined ? ` (memory limit ${cfg.maxPages} pages; a trap at the limit is TinyGo running out of memory)` : '';
  return new OrdinalError('trap', op, `module trapped: ${msg}${hint}`, e);
}

/**
 * Returns a copy of a wasm binary whose (first, defined) memory has maximum maxPages.
 * Refuses a module without a defined memory or whose initial size is already above the limit.
 */
export function limitMemory(bytes, maxPages) {
  if (bytes.length < 8 || bytes[0] !== 0 || bytes[1] !== 0x61 || bytes[2] !== 0x73 || bytes[3] !== 0x6d) {
    throw new OrdinalError('bad-module', 'load', 'not a WebAssembly binary (bad magic)');
  }
  let pos = 8;
  while (pos < bytes.length) {
    const id = bytes[pos];
    const [size, sizeLen] = readU32(bytes, pos + 1);
    const start = pos + 1 + sizeLen;
    const end = start + size;
    if (end > bytes.length) throw new OrdinalError('bad-module', 'load', 'truncated WebAssembly section');
    if (id === 5) {
      let p = start;
      const [count, cl] = readU32(bytes, p);
      p += cl;
      if (count < 1) break;
      const flags = bytes[p++];
      if (flags & ~0x3) throw new OrdinalError('bad-module', 'load', `unsupported memory flags 0x${flags.toString(16)} (memory64?)`);
      const [min, ml] = readU32(bytes, p);
      p += ml;
      let max = maxPages;
      if (flags & 1) {
        const [m, xl] = readU32(bytes, p);
        p += xl;
        max = Math.min(m, maxPages);
      }
      if (min > max) {
        throw new OrdinalError('bad-module', 'load', `module needs ${min} pages of memory at start, above the limit of ${maxPages}`);
      }
      const entry = [...writeU32(count), (flags & 2) | 1, ...writeU32(min), ...writeU32(max)];
      const body = new Uint8Array([...entry, ...bytes.subarray(p, end)]);
      const head = new Uint8Array([5, ...writeU32(body.length)]);
      const out = new Uint8Array(pos + head.length + body.length + (bytes.length - end));
      out.set(bytes.subarray(0, pos), 0);
      out.set(head, pos);
      out.set(body, pos + head.length);
      out.set(bytes.subarray(end), pos + head.length + body.length);
      return out;
    }
    pos = end;
  }
  throw new OrdinalError('bad-module', 'load', 'module defines no memory');
}

function readU32(b, p) {
  let v = 0;
  let shift = 0;
  for (let i = 0; i < 5; i++) {
    const byte = b[p + i];
    if (byte === undefined) break;
    v += (byte & 0x7f) * 2 ** shift;
    if ((byte & 0x80) === 0) return [v, i + 1];
    shift += 7;
  }
  throw new OrdinalError('bad-module', 'load', 'malformed LEB128 in WebAssembly binary');
}

function writeU32(v) {
  const out = [];
  do {
    let byte = v & 0x7f;
    v = Math.floor(v / 128);
    if (v !== 0) byte |= 0x80;
    out.push(byte);
  } while (v !== 0);
  return out;
}
