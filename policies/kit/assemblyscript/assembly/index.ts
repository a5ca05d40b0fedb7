// The freeze policy: while a set's annotation freeze.example.com/until names a time still to come, no pod of
// it goes down (deletes and in-place updates are held until that time); creations and status are not held.
// This directory is the template of a policy in AssemblyScript: copy it, write decide, describe the policy
// by its name, replace testdata/ with your fixtures (docs/policies.md).
import * as kit from "./kit";

// The policy's name (what sets write in ordinal.dev/policies) and the context it asks for (none here).
const DESCRIBE = '{"abi":1,"kind":"policy","policy":"freeze","version":"0.1.0"}';
const UNTIL = "freeze.example.com/until";

export function describe(): i32 { return kit.describe(DESCRIBE); }
export function evaluate(): i32 { return kit.evaluate(decide); }

function decide(input: kit.Input): kit.Hold[] {
  const holds: kit.Hold[] = [];
  const v = input.annotation(UNTIL);
  if (v == null) return holds;
  const until = kit.parseTime(v);
  if (until < 0 || input.now >= until) return holds;
  const ds = input.disruptions();
  for (let i = 0; i < ds.length; i++) {
    const a = ds[i].action;
    if (input.mayHold(a)) holds.push(new kit.Hold(a.index, "Frozen", "frozen until " + v, until - input.now));
  }
  return holds;
}
