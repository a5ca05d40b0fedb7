import { readdir, readFile } from 'node:fs/promises';
import { join, relative } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = fileURLToPath(new URL('../../../', import.meta.url));
export const conformanceDir = join(repoRoot, 'internal/conformance/cases');
export const cliPath = fileURLToPath(new URL('../reconcile.mjs', import.meta.url));

/** Every <name>.snapshot.json below internal/conformance/cases with its <name>.plan.json, sorted by name. */
export async function loadCases(root = conformanceDir) {
  const cases = [];
  async function walk(dir) {
    for (const e of await readdir(dir, { withFileTypes: true })) {
      const p = join(dir, e.name);
      if (e.isDirectory()) await walk(p);
      else if (e.name.endsWith('.snapshot.json')) {
        const base = p.slice(0, -'.snapshot.json'.length);
        cases.push({
          name: relative(root, base),
          snapshot: await readFile(p),
          plan: await readFile(base + '.plan.json'), // a case without a plan is an error
        });
      }
    }
  }
  await walk(root);
  return cases.sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}

/**
 * internal/jsoncmp in JavaScript: "" when expected and actual are the same JSON value (key order
 * irrelevant, numbers compared as float64), else where they first differ.
 */
export function jsonDiff(expected, actual) {
  const dec = new TextDecoder('utf-8', { fatal: true });
  let e, a;
  try {
    e = JSON.parse(dec.decode(expected));
  } catch (err) {
    return `expected: invalid JSON: ${err.message}`;
  }
  try {
    a = JSON.parse(dec.decode(actual));
  } catch (err) {
    return `actual: invalid JSON: ${err.message}`;
  }
  return diff('', e, a);
}

const kind = (v) => (v === null ? 'null' : Array.isArray(v) ? 'array' : typeof v);
const brief = (v) => {
  const s = JSON.stringify(v);
  return s.length > 120 ? s.slice(0, 117) + '...' : s;
};
const show = (p) => p || '(root)';

function diff(path, e, a) {
  if (kind(e) !== kind(a)) return `${show(path)}: expected ${brief(e)}, got ${brief(a)}`;
  if (kind(e) === 'object') {
    const keys = [...new Set([...Object.keys(e), ...Object.keys(a)])].sort();
    for (const k of keys) {
      if (!Object.hasOwn(a, k)) return `${show(path)}: missing key ${JSON.stringify(k)} in actual (expected ${brief(e[k])})`;
      if (!Object.hasOwn(e, k)) return `${show(path)}: unexpected key ${JSON.stringify(k)} in actual (${brief(a[k])})`;
      const d = diff(path ? `${path}.${k}` : k, e[k], a[k]);
      if (d) return d;
    }
    return '';
  }
  if (kind(e) === 'array') {
    for (let i = 0; i < Math.min(e.length, a.length); i++) {
      const d = diff(`${path}[${i}]`, e[i], a[i]);
      if (d) return d;
    }
    return e.length === a.length ? '' : `${show(path)}: expected ${e.length} elements, got ${a.length}`;
  }
  return e === a ? '' : `${show(path)}: expected ${brief(e)}, got ${brief(a)}`;
}
