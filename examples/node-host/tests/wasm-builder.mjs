// Hand-assembled misbehaving modules for the host's containment tests (no toolchain needed).
// Each exports `memory`, `describe` and `reconcile` like the real module; `describe` answers a
// valid ABI v1 document through the Extism kernel (alloc/store_u8/output_set) unless told otherwise.

const u32 = (v) => {
  const out = [];
  do {
    let b = v & 0x7f;
    v >>>= 7;
    if (v) b |= 0x80;
    out.push(b);
  } while (v);
  return out;
};
const str = (s) => [...u32(Buffer.byteLength(s)), ...Buffer.from(s)];
const section = (id, body) => [id, ...u32(body.length), ...body];
const vec = (items) => [...u32(items.length), ...items.flat()];

const I32 = 0x7f, I64 = 0x7e;
const END = 0x0b;

// Function bodies without their locals declaration, `() -> i32`.
export const bodies = {
  ok: [0x41, 0x00, END], // return 0, set no output
  trap: [0x00, END], // unreachable
  loop: [0x03, 0x40, 0x0c, 0x00, END, 0x41, 0x00, END], // loop { br 0 } ; i32.const 0
  // grow memory one page at a time until memory.grow returns -1, then trap (as TinyGo does)
  oom: [0x03, 0x40, 0x41, 0x01, 0x40, 0x00, 0x41, 0x7f, 0x47, 0x0d, 0x00, END, 0x00, END],
};

/**
 * @param {{describe?: string|null, reconcile?: keyof bodies}} spec describe: the JSON text the
 *   describe export outputs (null: none), reconcile: its behaviour
 */
export function buildModule({ describe = '{"abi":1,"module":"test","moduleVersion":"0.0.0","kubernetesVersion":"v1.37.1","features":{}}', reconcile = 'trap' } = {}) {
  const types = [
    [0x60, 0x00, 0x01, I32], // 0: () -> i32
    [0x60, 0x01, I64, 0x01, I64], // 1: alloc (i64) -> i64
    [0x60, 0x02, I64, I32, 0x00], // 2: store_u8 (i64, i32) -> ()
    [0x60, 0x02, I64, I64, 0x00], // 3: output_set (i64, i64) -> ()
  ];
  const imports = [
    [...str('extism:host/env'), ...str('alloc'), 0x00, 1],
    [...str('extism:host/env'), ...str('store_u8'), 0x00, 2],
    [...str('extism:host/env'), ...str('output_set'), 0x00, 3],
  ];
  const nImports = imports.length;
  const text = describe === null ? '' : describe;
  const len = Buffer.byteLength(text);
  // describe: off = alloc(len); for i in 0..len: store_u8(off+i, mem[i]); output_set(off, len); 0
  const describeBody = describe === null ? withNoLocals(bodies.ok) : [
    0x02, 0x01, I64, 0x01, I32, // locals: off i64 (local 0), i i32 (local 1)
    0x42, ...sleb(len), 0x10, 0x00, 0x21, 0x00, // off = alloc(len)
    0x02, 0x40, 0x03, 0x40, // block loop
    0x20, 0x01, 0x41, ...sleb(len), 0x4e, 0x0d, 0x01, // if i >= len: br 1 (i32.ge_s)
    0x20, 0x00, 0x20, 0x01, 0xad, 0x7c, // off + i64.extend_i32_u(i)
    0x20, 0x01, 0x2d, 0x00, 0x00, // i32.load8_u mem[i]
    0x10, 0x01, // store_u8
    0x20, 0x01, 0x41, 0x01, 0x6a, 0x21, 0x01, // i++
    0x0c, 0x00, END, END, // br loop
    0x20, 0x00, 0x42, ...sleb(len), 0x10, 0x02, // output_set(off, len)
    0x41, 0x00, END,
  ];
  const code = [describeBody, withNoLocals(bodies[reconcile])];
  const bytes = [
    0x00, 0x61, 0x73, 0x6d, 0x01, 0x00, 0x00, 0x00,
    ...section(1, vec(types)),
    ...section(2, vec(imports)),
    ...section(3, vec([[0], [0]])),
    ...section(5, vec([[0x00, 0x01]])), // one memory, min 1 page, no maximum
    ...section(7, vec([
      [...str('memory'), 0x02, 0],
      [...str('describe'), 0x00, nImports],
      [...str('reconcile'), 0x00, nImports + 1],
    ])),
    ...section(10, vec(code.map((b) => [...u32(b.length), ...b]))),
    ...section(11, vec([[0x00, 0x41, 0x00, END, ...str(text)]])), // active data at 0
  ];
  return new Uint8Array(bytes);
}

function withNoLocals(body) {
  return [0x00, ...body];
}

function sleb(v) {
  const out = [];
  for (;;) {
    const b = v & 0x7f;
    v >>= 7;
    if ((v === 0 && !(b & 0x40)) || (v === -1 && b & 0x40)) {
      out.push(b);
      return out;
    }
    out.push(b | 0x80);
  }
}
