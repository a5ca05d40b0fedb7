// The policy kit for AssemblyScript (abi/POLICY.md): what policies/kit is to a Go policy. It reads evaluate's
// input, runs the policy's decide, and writes the answer, so a policy is only its decision:
//
//   export function describe(): i32 { return kit.describe(DESCRIBE); }
//   export function evaluate(): i32 { return kit.evaluate(decide); }
//   function decide(input: kit.Input): kit.Hold[] { ... }
//
// The answer is written as UTF-8 (the PDK's outputString would count UTF-16 units as bytes) and every string
// in it is escaped as JSON requires: a policy's messages may hold any text.
import { Host } from "@extism/as-pdk";
import { JSON } from "assemblyscript-json/assembly";

// The longest retryAfterSeconds the ABI allows: a longer wait is asked for a day at a time.
export const MAX_RETRY_SECONDS: i64 = 86400;

// Hold holds one write of the plan back (abi/POLICY.md section 3). retryAfterSeconds 0: the host's retry.
export class Hold {
  constructor(public action: i32, public reason: string, public message: string, public retryAfterSeconds: i64 = 0) {}
}

// Action is one write of the plan: its index in the plan, verb, kind, name, the whole action (object,
// patch), and whether the plan says it will fail (its "error").
export class Action {
  constructor(public index: i32, public verb: string, public kind: string, public name: string,
    public json: JSON.Obj, public failing: bool) {}
}

// Disruption is a write that takes a pod down: its delete, or the first write of its in-place update that
// restarts a container (a resize when it has one, else the update; abi/POLICY.md section 2.1), which holds
// the whole update when held.
export class Disruption {
  constructor(public action: Action, public inPlace: bool) {}
}

// Input is one evaluate call's input.
export class Input {
  failure: string | null = null;
  constructor(public json: JSON.Obj, public snapshot: JSON.Obj, public now: i64, public from: i32,
    public actions: Action[]) {}

  // set is the snapshot's StatefulSet.
  set(): JSON.Obj | null { return this.snapshot.getObj("statefulSet"); }

  // annotation is the set's annotation key (null: it has none).
  annotation(key: string): string | null {
    return str(child(child(this.set(), "metadata"), "annotations"), key);
  }

  // mayHold: a hold of a still matters (issued from `from` on, not planned to fail, not the status write).
  mayHold(a: Action): bool { return a.index >= this.from && !a.failing && a.verb != "updateStatus"; }

  // pending are the actions a policy may still hold (mayHold).
  pending(): Action[] {
    const out: Action[] = [];
    for (let i = 0; i < this.actions.length; i++) if (this.mayHold(this.actions[i])) out.push(this.actions[i]);
    return out;
  }

  // disruptions are the plan's pod deletes and the in-place updates that restart a container (restarts), in
  // plan order, each once: those issued already and those planned to fail too (mayHold tells).
  disruptions(): Disruption[] {
    const out: Disruption[] = [];
    for (let i = 0; i < this.actions.length; i++) {
      const a = this.actions[i];
      if (a.kind != "Pod") continue;
      if (a.verb == "delete") out.push(new Disruption(a, false));
      else if ((a.verb == "resize" || a.verb == "update") && this.inPlaceFirst(i) == i &&
        this.restarts(this.isPodWrite(i, "resize", a.name) ? i + 1 : i)) out.push(new Disruption(a, true));
    }
    return out;
  }

  // fail makes the answer an error (PolicyFailed): the host holds nothing back and reports the message.
  fail(message: string): void { this.failure = message; }

  // inPlaceFirst is the first write of the in-place update action i is part of, -1 when none: the Pod update
  // whose object's controller-revision-hash label is what its ordinal.dev/in-place-update annotation names
  // and not the snapshot pod's, and the resize of that pod right before it (abi/inplace's At).
  private inPlaceFirst(i: i32): i32 {
    const name = this.actions[i].name;
    let update = i;
    if (this.isPodWrite(i, "resize", name)) {
      update = i + 1;
      if (!this.isPodWrite(update, "update", name)) return -1;
    } else if (!this.isPodWrite(i, "update", name)) {
      return -1;
    }
    const meta = child(child(this.actions[update].json, "object"), "metadata");
    const revision = member(child(meta, "labels"), "controller-revision-hash");
    const record = member(child(meta, "annotations"), "ordinal.dev/in-place-update");
    if (revision.length == 0 || record != revision || revision == this.podRevision(name)) return -1;
    return this.isPodWrite(update - 1, "resize", name) ? update - 1 : update;
  }

  private isPodWrite(i: i32, verb: string, name: string): bool {
    if (i < 0 || i >= this.actions.length) return false;
    const a = this.actions[i];
    return a.verb == verb && a.kind == "Pod" && a.name == name;
  }

  // restarts: the in-place update whose update is action i restarts a container of its pod (the Go kit's
  // Restarts, abi/POLICY.md section 2.1): against the snapshot's pod, its object changes the image of a
  // container or init container, adds one, or changes a CPU or memory request or limit of one whose
  // resizePolicy for that resource is RestartContainer. A resize under NotRequired, the default, is live.
  restarts(i: i32): bool {
    const was = child(this.pod(this.actions[i].name), "spec");
    const will = child(child(this.actions[i].json, "object"), "spec");
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

  // pod is the snapshot's first pod of that name (null: none).
  private pod(name: string): JSON.Obj | null {
    return named(objects(this.snapshot, "pods"), name);
  }

  // podRevision is the controller-revision-hash label of the snapshot's first pod of that name ("": none).
  private podRevision(name: string): string {
    return member(child(child(this.pod(name), "metadata"), "labels"), "controller-revision-hash");
  }
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

// describe writes the policy's describe output.
export function describe(describeJSON: string): i32 {
  output(describeJSON);
  return 0;
}

// evaluate reads the input, runs decide and writes its holds, or an error answer when the input cannot be
// read or decide failed (Input.fail).
export function evaluate(decide: (input: Input) => Hold[]): i32 {
  const input = parse(Host.inputString());
  if (input.failure != null) {
    output(failure(<string>input.failure));
    return 0;
  }
  const holds = decide(input);
  output(input.failure != null ? failure(<string>input.failure) : answer(holds));
  return 0;
}

// parseTime reads an RFC 3339 time (as the snapshot's now) into Unix seconds; -1 when it is not one.
export function parseTime(s: string): i64 {
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

// jsonString is s as a JSON string.
export function jsonString(s: string): string {
  let out = '"';
  for (let i = 0; i < s.length; i++) {
    const code = s.charCodeAt(i);
    const c = s.charAt(i);
    if (c == '"' || c == "\\") out += "\\" + c;
    else if (code < 0x20) out += "\\u00" + (code < 0x10 ? "0" : "") + code.toString(16);
    else out += c;
  }
  return out + '"';
}

// child is o's object member key (null: none, or not an object).
export function child(o: JSON.Obj | null, key: string): JSON.Obj | null {
  return o == null ? null : o.getObj(key);
}

// str is o's string member key (null: none, or not a string).
export function str(o: JSON.Obj | null, key: string): string | null {
  if (o == null) return null;
  const v = o.getString(key);
  return v == null ? null : v.valueOf();
}

// member is o's string member key, "" when it has none.
export function member(o: JSON.Obj | null, key: string): string {
  const v = str(o, key);
  return v == null ? "" : v;
}

function parse(raw: string): Input {
  const empty = new Input(new JSON.Obj(), new JSON.Obj(), -1, 0, []);
  const root = JSON.parse(raw);
  if (!root.isObj) return failed(empty, "input is not a JSON object");
  const obj = <JSON.Obj>root;
  const abi = obj.getInteger("abi");
  if (abi == null || abi.valueOf() != 1) return failed(empty, "input abi is not 1");
  const snapshot = obj.getObj("snapshot");
  const now = snapshot == null ? -1 : parseTime(member(snapshot, "now"));
  if (snapshot == null || now < 0) return failed(empty, "snapshot.now is not an RFC 3339 time");
  const fromV = obj.getInteger("from");
  const actions: Action[] = [];
  const plan = obj.getObj("plan");
  const list: JSON.Arr | null = plan == null ? null : plan.getArr("actions");
  if (list != null) {
    const items: JSON.Value[] = list.valueOf();
    for (let i = 0; i < items.length; i++) {
      const a = items[i].isObj ? <JSON.Obj>items[i] : new JSON.Obj();
      const e = a.get("error");
      const failing = e != null && !e.isNull && !(e.isString && (<JSON.Str>e).valueOf().length == 0);
      actions.push(new Action(i, member(a, "verb"), member(a, "kind"), member(a, "name"), a, failing));
    }
  }
  return new Input(obj, snapshot, now, fromV == null ? 0 : <i32>fromV.valueOf(), actions);
}

function failed(input: Input, message: string): Input {
  input.fail(message);
  return input;
}

function answer(holds: Hold[]): string {
  let out = '{"abi":1,"holds":[';
  for (let i = 0; i < holds.length; i++) {
    const h = holds[i];
    if (i > 0) out += ",";
    out += '{"action":' + h.action.toString() + ',"reason":' + jsonString(h.reason) + ',"message":' + jsonString(h.message);
    if (h.retryAfterSeconds > 0) {
      const r = h.retryAfterSeconds < MAX_RETRY_SECONDS ? h.retryAfterSeconds : MAX_RETRY_SECONDS;
      out += ',"retryAfterSeconds":' + r.toString();
    }
    out += "}";
  }
  return out + "]}";
}

function failure(message: string): string {
  return '{"abi":1,"holds":[],"error":{"code":"PolicyFailed","message":' + jsonString(message) + "}}";
}

// output writes s as UTF-8.
function output(s: string): void {
  Host.output(Uint8Array.wrap(String.UTF8.encode(s)));
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

function daysFromCivil(y: i64, m: i64, d: i64): i64 {
  y -= m <= 2 ? 1 : 0;
  const era = (y >= 0 ? y : y - 399) / 400;
  const yoe = y - era * 400;
  const doy = (153 * (m + (m > 2 ? -3 : 9)) + 2) / 5 + d - 1;
  const doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  return era * 146097 + doe - 719468;
}
