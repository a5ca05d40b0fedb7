// Package rollout says where a StatefulSet's rollout stands, as the reconcile module sees it: the
// revisions and the pods at each, what the next sync will write, and why the rollout waits when it
// writes nothing (Status, for `kubectl ordinal status`); and the set's revisions with the template
// changes between them (History, for `kubectl ordinal history`).
//
// Both are pure functions of a snapshot (and, for Status, the module's plan for it): the plugin builds
// the snapshot from the live cluster, tests from recorded ones.
package rollout
