// The window policy (abi/POLICY.md) in AssemblyScript: pods are deleted, or updated in place, only inside
// the set's maintenance windows (window.ordinal.dev/allow, UTC) and while the host's signal
// window.ordinal.dev/signal is true.
// policies/window/window.go is the same policy in Go; both answer every fixture of policies/window/testdata
// the same (policies/fixtures_test.go).
import { Host } from "@extism/as-pdk";
import { JSON } from "assemblyscript-json/assembly";

const ANNOTATION_ALLOW = "window.ordinal.dev/allow";
const ANNOTATION_SIGNAL = "window.ordinal.dev/signal";
const SIGNAL_RETRY: i64 = 30;
const MAX_RETRY: i64 = 86400;
const DAYS: string[] = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"];

// output writes s as UTF-8 (the PDK's outputString counts UTF-16 units as bytes, cutting non-ASCII text).
function output(s: string): void {
  Host.output(Uint8Array.wrap(String.UTF8.encode(s)));
}

export function describe(): i32 {
  output('{"abi":1,"kind":"policy","policy":"window","version":"0.1.0"}');
  return 0;
}

export function evaluate(): i32 {
  output(answer(Host.inputString()));
  return 0;
}

class Hold {
  constructor(public action: i32, public reason: string, public message: string, public retry: i64) {}
}

// json writes s as a JSON string.
function json(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    const c = s.charAt(i);
    if (c == '"' || c == "\\") {
      out += "\\" + c;
    } else if (code < 0x20) {
      out += "\\u00" + (code < 0x10 ? "0" : "") + code.toString(16);
    } else {
      out += c;
    }
  }
  return out + '"';
}

// q quotes a value in a message (json escapes what JSON must): as the Go build does.
function q(s: string): string {
  return '"' + s + '"';
}

function isSpace(c: string): bool {
  return c == " " || c == "\t" || c == "\n" || c == "\r" || c == "\v" || c == "\f";
}

function trimASCII(s: string): string {
  let a = 0, b = s.length;
  while (a < b && isSpace(s.charAt(a))) a++;
  while (b > a && isSpace(s.charAt(b - 1))) b--;
  return s.substring(a, b);
}

function child(o: JSON.Obj | null, key: string): JSON.Obj | null {
  if (o == null) return null;
  return o.getObj(key);
}

function str(o: JSON.Obj | null, key: string): string | null {
  if (o == null) return null;
  const v = o.getString(key);
  if (v == null) return null;
  return v.valueOf();
}

function failure(message: string): string {
  return '{"abi":1,"holds":[],"error":{"code":"PolicyFailed","message":' + json(message) + "}}";
}

function answer(input: string): string {
  const root = JSON.parse(input);
  if (!root.isObj) return failure("input is not valid JSON");
  const obj = <JSON.Obj>root;
  const abi = obj.getInteger("abi");
  if (abi == null || abi.valueOf() != 1) return failure("input abi is not 1");
  const snapshot = obj.getObj("snapshot");
  if (snapshot == null) return failure("snapshot.now is not an RFC 3339 time");
  const nowStr = snapshot.getString("now");
  const now = nowStr == null ? -1 : parseTime(nowStr.valueOf());
  if (now < 0) return failure("snapshot.now is not an RFC 3339 time");

  const ann = child(child(child(snapshot, "statefulSet"), "metadata"), "annotations");
  const allow = str(ann, ANNOTATION_ALLOW);
  const signal = str(ann, ANNOTATION_SIGNAL);
  if (allow == null && signal == null) return '{"abi":1,"holds":[]}';

  let reason = "", message = "", retry: i64 = 0;
  if (allow != null) {
    const err = parseWindows(allow);
    if (err.length > 0) {
      reason = "InvalidWindow";
      message = ANNOTATION_ALLOW + " " + q(allow) + ": " + err;
      retry = 60;
    } else {
      const next = nextOpening(now);
      if (next >= 0) {
        reason = "OutsideWindow";
        message = "outside the maintenance window " + allow + " (UTC); it opens at " + formatTime(next);
        retry = next - now < MAX_RETRY ? next - now : MAX_RETRY;
      }
    }
  }
  if (reason.length == 0 && signal != null) {
    const signals = child(child(obj, "context"), "signals");
    let v: JSON.Value | null = null;
    if (signals != null) v = signals.getValue(signal);
    if (v == null) {
      reason = "SignalUnknown";
      message = "the host supplies no signal " + q(signal);
      retry = SIGNAL_RETRY;
    } else if (!(v.isBool && (<JSON.Bool>v).valueOf()) && !(v.isString && (<JSON.Str>v).valueOf() == "true")) {
      reason = "SignalNotTrue";
      message = "signal " + q(signal) + " is " + (v.isString ? q((<JSON.Str>v).valueOf()) : v.stringify());
      retry = SIGNAL_RETRY;
    }
  }
  if (reason.length == 0) return '{"abi":1,"holds":[]}';

  const fromV = obj.getInteger("from");
  const from: i64 = fromV == null ? 0 : fromV.valueOf();
  const plan = child(obj, "plan");
  const holds: Hold[] = [];
  if (plan != null) {
    const actions = plan.getArr("actions");
    if (actions != null) {
      const items: JSON.Value[] = actions.valueOf();
      for (let i = 0; i < items.length; i++) {
        const item = items[i];
        if (<i64>i < from || !item.isObj) continue;
        const a = <JSON.Obj>item;
        const verb = str(a, "verb"), kind = str(a, "kind"), err = str(a, "error");
        if (err != null && err.length > 0) continue;
        if (kind == null || kind != "Pod" || verb == null) continue;
        if (verb == "delete" || (verb == "resize" || verb == "update") && inPlaceFirst(items, i, snapshot) == i &&
          restarts(items, verb == "resize" ? i + 1 : i, snapshot)) {
          holds.push(new Hold(i, reason, message, retry));
        }
      }
    }
  }
  let out = '{"abi":1,"holds":[';
  for (let i = 0; i < holds.length; i++) {
    const h = holds[i];
    if (i > 0) out += ",";
    out += '{"action":' + h.action.toString() + ',"reason":' + json(h.reason) + ',"message":' + json(h.message);
    if (h.retry > 0) out += ',"retryAfterSeconds":' + h.retry.toString();
    out += "}";
  }
  return out + "]}";
}

// A string member of an object, "" when absent or not a string (as the Go kit's stringAt).
function member(o: JSON.Obj | null, key: string): string {
  const v = str(o, key);
  return v == null ? "" : v;
}

// action is item i of the plan's actions as an object (null: not one).
function action(items: JSON.Value[], i: i32): JSON.Obj | null {
  if (i < 0 || i >= items.length || !items[i].isObj) return null;
  return <JSON.Obj>items[i];
}

// isPodWrite: item i is the write verb of the Pod named name.
function isPodWrite(items: JSON.Value[], i: i32, verb: string, name: string): bool {
  const a = action(items, i);
  if (a == null) return false;
  const v = str(a, "verb"), k = str(a, "kind"), n = str(a, "name");
  return v != null && v == verb && k != null && k == "Pod" && n != null && n == name;
}

// podRevision is the controller-revision-hash label of the snapshot's first pod of that name ("" when none).
function podRevision(snapshot: JSON.Obj, name: string): string {
  return member(child(child(named(objects(snapshot, "pods"), name), "metadata"), "labels"), "controller-revision-hash");
}

// restarts: the in-place update whose update is item i restarts a container of its pod (abi/POLICY.md section
// 2.1, the Go kit's Restarts): against the snapshot's pod, its object changes the image of a container or init
// container, adds one, or changes a CPU or memory request or limit of one whose resizePolicy for that
// resource is RestartContainer. Any other (a resize the kubelet makes live) keeps the pod Ready: not held.
function restarts(items: JSON.Value[], i: i32, snapshot: JSON.Obj): bool {
  const was = child(named(objects(snapshot, "pods"), member(action(items, i), "name")), "spec");
  const will = child(child(action(items, i), "object"), "spec");
  const lists = ["containers", "initContainers"];
  for (let l = 0; l < lists.length; l++) {
    const before = objects(was, lists[l]), after = objects(will, lists[l]);
    for (let j = 0; j < after.length; j++) {
      const old = named(before, member(after[j], "name"));
      if (old == null || member(old, "image") != member(after[j], "image") || resizeRestarts(<JSON.Obj>old, after[j])) return true;
    }
  }
  return false;
}

// resizeRestarts: a CPU or memory request or limit differs between the container as it was and as it will
// be, and the container's resizePolicy restarts it for that resource.
function resizeRestarts(was: JSON.Obj, will: JSON.Obj): bool {
  const names = ["cpu", "memory"], kinds = ["requests", "limits"];
  for (let r = 0; r < names.length; r++) {
    let changed = false;
    for (let k = 0; k < kinds.length; k++) {
      changed = changed || member(child(child(was, "resources"), kinds[k]), names[r]) != member(child(child(will, "resources"), kinds[k]), names[r]);
    }
    if (!changed) continue;
    const policies = objects(was, "resizePolicy");
    for (let p = 0; p < policies.length; p++) {
      if (member(policies[p], "resourceName") == names[r] && member(policies[p], "restartPolicy") == "RestartContainer") return true;
    }
  }
  return false;
}

// objects are the objects of o's array member key (none: not an array).
function objects(o: JSON.Obj | null, key: string): JSON.Obj[] {
  const out: JSON.Obj[] = [];
  if (o == null) return out;
  const arr = o.getArr(key);
  if (arr == null) return out;
  const list: JSON.Value[] = arr.valueOf();
  for (let i = 0; i < list.length; i++) if (list[i].isObj) out.push(<JSON.Obj>list[i]);
  return out;
}

// named is the first of list whose metadata.name, or name, is name (null: none).
function named(list: JSON.Obj[], name: string): JSON.Obj | null {
  for (let i = 0; i < list.length; i++) {
    const meta = child(list[i], "metadata");
    if ((meta != null ? member(meta, "name") : member(list[i], "name")) == name) return list[i];
  }
  return null;
}

// inPlaceFirst is the first write of the in-place update action i is part of (abi/POLICY.md section 2.1:
// the Pod update whose object's controller-revision-hash label differs from the snapshot pod's and is what
// its ordinal.dev/in-place-update annotation names, and the resize of the same pod right before it), -1
// when it is part of none: abi/inplace's At, which the Go build uses.
function inPlaceFirst(items: JSON.Value[], i: i32, snapshot: JSON.Obj): i32 {
  const a = action(items, i);
  if (a == null) return -1;
  const name = member(a, "name");
  let update = i;
  if (isPodWrite(items, i, "resize", name)) {
    update = i + 1;
    if (!isPodWrite(items, update, "update", name)) return -1;
  } else if (!isPodWrite(items, i, "update", name)) {
    return -1;
  }
  const meta = child(child(action(items, update), "object"), "metadata");
  const revision = member(child(meta, "labels"), "controller-revision-hash");
  const record = member(child(meta, "annotations"), "ordinal.dev/in-place-update");
  if (revision.length == 0 || record != revision || revision == podRevision(snapshot, name)) return -1;
  return isPodWrite(items, update - 1, "resize", name) ? update - 1 : update;
}

// The windows parsed by parseWindows: a bit per weekday (Sunday 0), start and length in seconds.
let winDays: u8[] = [];
let winStart: i64[] = [];
let winLength: i64[] = [];

// fields splits on ASCII white space, as the Go build does.
function fields(s: string): string[] {
  const out: string[] = [];
  let cur = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charAt(i);
    if (isSpace(c)) {
      if (cur.length > 0) out.push(cur);
      cur = "";
    } else {
      cur += c;
    }
  }
  if (cur.length > 0) out.push(cur);
  return out;
}

// parseWindows fills the windows; it returns an error message, or "" when the value is good.
function parseWindows(s: string): string {
  winDays = []; winStart = []; winLength = [];
  const parts = s.split(",");
  for (let p = 0; p < parts.length; p++) {
    let f = fields(parts[p]);
    let days: u8 = 0x7f;
    if (f.length == 2) {
      const d = parseDays(f[0]);
      if (d < 0) return "days are Mon, Tue, Wed, Thu, Fri, Sat, Sun or a range like Sat-Sun, not " + q(f[0]);
      days = <u8>d;
      f = [f[1]];
    } else if (f.length != 1) {
      return "a window is [DAY[-DAY] ]HH:MM-HH:MM, not " + q(trimASCII(parts[p]));
    }
    const dash = f[0].indexOf("-");
    const start = dash < 0 ? -1 : parseClock(f[0].substring(0, dash));
    const end = dash < 0 ? -1 : parseClock(f[0].substring(dash + 1));
    if (start < 0 || end < 0) return "a span is HH:MM-HH:MM, not " + q(f[0]);
    let length = end - start;
    if (length <= 0) length += 86400;
    winDays.push(days); winStart.push(start); winLength.push(length);
  }
  return "";
}

function asciiLower(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    out += String.fromCharCode(c >= 65 && c <= 90 ? c + 32 : c);
  }
  return out;
}

// dayIndex folds ASCII case only, as the Go build does.
function dayIndex(s: string): i32 {
  for (let i = 0; i < 7; i++) if (s.length == DAYS[i].length && asciiLower(s) == asciiLower(DAYS[i])) return i;
  return -1;
}

function parseDays(s: string): i32 {
  const dash = s.indexOf("-");
  const a = dayIndex(dash < 0 ? s : s.substring(0, dash));
  const b = dash < 0 ? a : dayIndex(s.substring(dash + 1));
  if (a < 0 || b < 0) return -1;
  let d = 0;
  let i = a;
  while (true) {
    d |= 1 << i;
    if (i == b) break;
    i = (i + 1) % 7;
  }
  return d;
}

function digits(s: string): i32 {
  if (s.length == 0 || s.length > 9) return -1;
  let n = 0;
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 48 || c > 57) return -1;
    n = n * 10 + (c - 48);
  }
  return n;
}

function parseClock(s: string): i64 {
  const colon = s.indexOf(":");
  if (colon < 0) return -1;
  const h = digits(s.substring(0, colon)), mPart = s.substring(colon + 1), m = digits(mPart);
  if (h < 0 || m < 0 || mPart.length != 2 || h > 24 || m > 59 || (h == 24 && m != 0)) return -1;
  return <i64>h * 3600 + <i64>m * 60;
}

// nextOpening is -1 when now is inside a window, else when the next one opens (Unix seconds).
function nextOpening(now: i64): i64 {
  const midnight = now - (now % 86400);
  let next: i64 = -1;
  for (let day = -1; day <= 7; day++) {
    const d = midnight + <i64>day * 86400;
    const weekday = <i32>(((d / 86400) % 7 + 11) % 7); // 1970-01-01 was a Thursday (4)
    for (let w = 0; w < winDays.length; w++) {
      if ((<i32>winDays[w] & (1 << weekday)) == 0) continue;
      const from = d + winStart[w];
      if (now >= from && now < from + winLength[w]) return -1;
      if (from > now && (next < 0 || from < next)) next = from;
    }
  }
  return next;
}

// daysFromCivil is the day number of a proleptic Gregorian date (Howard Hinnant's algorithm).
function daysFromCivil(y: i64, m: i64, d: i64): i64 {
  y -= m <= 2 ? 1 : 0;
  const era = (y >= 0 ? y : y - 399) / 400;
  const yoe = y - era * 400;
  const doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}

// parseTime reads an RFC 3339 time to Unix seconds (fractions dropped), -1 when it is not one.
function parseTime(s: string): i64 {
  if (s.length < 20 || s.charAt(4) != "-" || s.charAt(7) != "-" || (s.charAt(10) != "T" && s.charAt(10) != "t") || s.charAt(13) != ":" || s.charAt(16) != ":") return -1;
  const y = digits(s.substring(0, 4)), mo = digits(s.substring(5, 7)), d = digits(s.substring(8, 10));
  const h = digits(s.substring(11, 13)), mi = digits(s.substring(14, 16)), se = digits(s.substring(17, 19));
  if (y < 0 || mo < 1 || mo > 12 || d < 1 || d > 31 || h < 0 || h > 23 || mi < 0 || mi > 59 || se < 0 || se > 60) return -1;
  let i = 19;
  if (s.charAt(i) == ".") {
    i++;
    while (i < s.length && s.charCodeAt(i) >= 48 && s.charCodeAt(i) <= 57) i++;
  }
  let offset: i64 = 0;
  const z = s.substring(i);
  if (z == "Z" || z == "z") {
    offset = 0;
  } else if (z.length == 6 && (z.charAt(0) == "+" || z.charAt(0) == "-") && z.charAt(3) == ":") {
    const oh = digits(z.substring(1, 3)), om = digits(z.substring(4, 6));
    if (oh < 0 || om < 0) return -1;
    offset = (<i64>oh * 3600 + <i64>om * 60) * (z.charAt(0) == "-" ? -1 : 1);
  } else {
    return -1;
  }
  return daysFromCivil(y, mo, d) * 86400 + <i64>h * 3600 + <i64>mi * 60 + <i64>se - offset;
}

function pad(n: i64, width: i32): string {
  let s = n.toString();
  while (s.length < width) s = "0" + s;
  return s;
}

// formatTime writes Unix seconds as RFC 3339 in UTC.
function formatTime(t: i64): string {
  const days = t / 86400, secs = t % 86400;
  const z = days + 719468;
  const era = (z >= 0 ? z : z - 146096) / 146097;
  const doe = z - era * 146097;
  const yoe = (doe - doe / 1460 + doe / 36524 - doe / 146096) / 365;
  const doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
  const mp = (5 * doy + 2) / 153;
  const d = doy - (153 * mp + 2) / 5 + 1;
  const m = mp < 10 ? mp + 3 : mp - 9;
  const y = yoe + era * 400 + (m <= 2 ? 1 : 0);
  return pad(y, 4) + "-" + pad(m, 2) + "-" + pad(d, 2) + "T" + pad(secs / 3600, 2) + ":" + pad((secs % 3600) / 60, 2) + ":" + pad(secs % 60, 2) + "Z";
}
