// Package world is the replay's simulated cluster: an in-memory API server (create, update, patch,
// delete, watch, with a real server's answers and errors), its garbage collector, a kubelet that starts,
// readies and removes pods on a modelled pace, and the clock they share. The replay engine drives it only
// through this package's API, so the world can be read, tested and changed without the engine.
package world

import "github.com/ordinal-dev/ordinal/internal/jsonobj"

// Obj is a decoded JSON object, the form every stored object takes.
type Obj = jsonobj.Obj

// VerifyOwnerGraph makes every garbage collection also look at every object and panic if the incremental
// owner graph judged differently (tests: the replay's TestMain sets it with its encode-once check).
var VerifyOwnerGraph = false
