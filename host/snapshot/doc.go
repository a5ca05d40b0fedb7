// Package snapshot is what a sync reads: a set's objects (Objects, SelectObjects, where they come from: the
// controller's informers, or live calls with Live), the ABI v1 snapshot built from them (Build, with the
// controller's per-set EncodeCache) and the kinds of set reconciled (Target). The controller, the webhook
// and the CLI build snapshots only here, so each sends the module the same bytes; the controller and
// `kubectl ordinal status --watch` watch a kind's sets with the same informer (NewSetInformer,
// CustomSetInformer, TrimManagedFields, through JSONClient for a custom kind).
package snapshot
