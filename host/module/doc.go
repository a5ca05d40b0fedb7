// Package module manages the reconcile modules a host runs: the active one behind a Ref that a hot swap
// replaces between syncs, the Swapper's gate every module that did not come with the binary passes
// (describe, then every conformance case), the Registry of modules a set may name (ordinal.dev/module;
// OfSet reads which one it names) and the sources that offer new ones (a file, a ConfigMap). The
// controller, the webhook, the CLI and the replay take their modules from here; the sync itself is
// host/plan's Step.
package module
