package cli

// Every exit code of the ordinal command, in one place (issue 33): the codes, and the help texts that
// document them.

// Exit codes, documented in `ordinal --help`.
const (
	ExitOK            = 0 // plan printed, no error
	ExitUsage         = 1 // bad flags, unreadable files
	ExitRejected      = 2 // the module rejected the snapshot (error plan printed)
	ExitSyncFailed    = 3 // the sync failed as upstream's would (plan with SyncFailed printed)
	ExitModuleFailure = 4 // the module could not be loaded, trapped, timed out or ran out of memory
)

const exitCodesHelp = `Exit codes:
  0  plan printed, no error
  1  usage error, unreadable or too large input, an unknown field in it (always in a snapshot's envelope,
     a scenario or a test file; in its Kubernetes objects under --validate=strict), or a world an API
     server would refuse (replay, preview)
  2  the snapshot was rejected: the error plan is printed (error.code InvalidJSON, InvalidSnapshot,
     UnsupportedABI, UnknownFeatureGate, or StaleReference for a reference to an unchanged object, which
     only a session's previous call can resolve; error.path names the bad field); replay and preview
     exit 2 when the module rejects a snapshot of their world
  3  the sync failed the way upstream's would (error.code SyncFailed); the plan is printed
  4  the module failed: it could not be loaded or is over a module limit, speaks another ABI, trapped,
     timed out, ran out of memory, or returned something that is not an ABI v1 plan`

// ExitGoldenDiffers is `replay --golden`'s exit code when the timeline differs from the golden file.
const ExitGoldenDiffers = 5

// ExitTestFailed: a test of `ordinal test` did not get what it expects (the same code as a replay whose
// timeline differs from its --golden file: a CI job gates on both alike).
const ExitTestFailed = ExitGoldenDiffers

// Exit codes of replay and preview for the rollout they found, so that CI can gate on them.
const (
	ExitStuck  = 6 // the rollout ends stuck: nothing more will happen, yet pods are missing, not Ready or not updated
	ExitLimit  = 7 // the replay reached its step or time limit, or --replay-timeout, before the rollout settled
	ExitFailOn = 8 // a warning named in --fail-on was found (e.g. data-loss, policy-failed)
	ExitHeld   = 9 // the rollout ends held by a policy: nothing but its hold keeps it from going on
)

const rolloutExitCodesHelp = `  6  the rollout ends stuck (a pod never becomes Ready, an OrderedReady set blocked, ...); --fail-on stuck
  7  the replay reached its step or time limit (or --replay-timeout) before the rollout settled; --fail-on limit
  8  a warning named in --fail-on was found, e.g. --fail-on data-loss, or policy-failed (a policy of the
     set trapped, timed out or answered out of contract, and held nothing back)
  9  the rollout ends held by a policy (a window not open, an approval not given: every pod Ready, and
     nothing but the hold keeps it from going on); --fail-on held
When several apply, the lowest code is the exit code.`
