package cli

import (
	"fmt"
	"strings"

	"github.com/spf13/cobra"
)

// Every exit code of the ordinal command, in one place: the codes, and what each means from the commands
// that return it. A command's help lists only the meanings it can return (withExitCodes).

// Exit codes.
const (
	ExitOK            = 0 // success
	ExitUsage         = 1 // bad flags, unreadable files
	ExitRejected      = 2 // the module rejected the snapshot (error plan printed)
	ExitSyncFailed    = 3 // the sync failed as upstream's would (plan with SyncFailed printed)
	ExitModuleFailure = 4 // the module could not be loaded, trapped, timed out or ran out of memory
)

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

// exitMeaning is what one exit code means from the commands that return it: a line of their help's
// "Exit codes:". A code has several meanings where commands differ in what success or failure is.
type exitMeaning struct {
	code int
	text string
}

// The table of meanings. Wrapped when printed (withExitCodes), so each is one line here.
var (
	exitOK            = exitMeaning{ExitOK, "success"}
	exitPlanPrinted   = exitMeaning{ExitOK, "plan printed, no error"}
	exitRolloutPassed = exitMeaning{ExitOK, "the rollout was replayed and nothing named in --fail-on was found (default: it did not end stuck or at a limit)"}
	exitStopped       = exitMeaning{ExitOK, "stopped by SIGTERM or SIGINT after the work in flight"}
	exitMigrated      = exitMeaning{ExitOK, "migrated (or nothing left to do)"}
	exitTestsPassed   = exitMeaning{ExitOK, "every test passed"}
	exitFixturesPass  = exitMeaning{ExitOK, "every fixture got its answer"}

	exitUsage       = exitMeaning{ExitUsage, "usage error, or an input that cannot be read or is malformed"}
	exitBadSnapshot = exitMeaning{ExitUsage, "usage error, unreadable or too large input, or an unknown field in it (always in a snapshot's envelope; in its Kubernetes objects under --validate=strict)"}
	exitBadWorld    = exitMeaning{ExitUsage, "usage error, unreadable or too large input, an unknown field in it (always in a snapshot's envelope or a scenario; in its Kubernetes objects under --validate=strict), or a world or an edit an API server would refuse"}
	exitVersionFail = exitMeaning{ExitUsage, "usage error, or the controller at --controller could not be reached or gave no module"}
	exitLiveUsage   = exitMeaning{ExitUsage, "usage error, or the API server could not be reached or refused a request (the message says which)"}
	exitLivePreview = exitMeaning{ExitUsage, "usage error, an unreadable manifest, or the API server could not be reached or refused the manifest's dry run"}
	exitServeFailed = exitMeaning{ExitUsage, "usage error, the cluster could not be reached, or the server could not run"}
	exitLeaseLost   = exitMeaning{ExitUsage, "usage error, the cluster could not be reached, or this replica lost its Lease"}
	exitMigrateFail = exitMeaning{ExitUsage, "refused, failed, or timed out: the message says which, and whether the source was deleted (then where the backup is and how to finish)"}
	exitTestInputs  = exitMeaning{ExitUsage, "usage error, or a test file or its inputs cannot be read or are malformed (no test was run)"}
	exitFixtureBad  = exitMeaning{ExitUsage, "usage error; a fixture file that cannot be read or is not a fixture (the file is named); --name is not the name the policy describes"}

	exitRejected      = exitMeaning{ExitRejected, "the snapshot was rejected: the error plan is printed (error.code InvalidJSON, InvalidSnapshot, UnsupportedABI, UnknownFeatureGate, or StaleReference for a reference to an unchanged object, which only a session's previous call can resolve; error.path names the bad field)"}
	exitWorldRejected = exitMeaning{ExitRejected, "the module rejected a snapshot of the world (error.code and error.path are printed)"}
	exitGatesRejected = exitMeaning{ExitRejected, "the module rejected the set's snapshot (e.g. an unknown gate in --feature-gates)"}
	exitTestRejected  = exitMeaning{ExitRejected, "the module rejected a test's snapshot (error.code and error.path are printed; no test was run)"}
	exitSyncFailed    = exitMeaning{ExitSyncFailed, "the sync failed the way upstream's would (error.code SyncFailed); the plan is printed"}

	exitModuleFailed = exitMeaning{ExitModuleFailure, "the module failed: it could not be loaded or is over a module limit, speaks another ABI, trapped, timed out, ran out of memory, or returned something that is not an ABI v1 plan or a plan the action firewall refuses"}
	exitModuleLoad   = exitMeaning{ExitModuleFailure, "the module could not be loaded"}
	exitModulesLoad  = exitMeaning{ExitModuleFailure, "the module or a --policy module could not be loaded"}
	exitTestModule   = exitMeaning{ExitModuleFailure, "the module could not be loaded, or failed on a test's snapshot (no test was run)"}
	exitPolicyLoad   = exitMeaning{ExitModuleFailure, "the module could not be loaded as a policy"}

	exitGoldenDiffers = exitMeaning{ExitGoldenDiffers, "--golden: the timeline differs from the golden file (with --golden, only 0 and 5 judge the rollout)"}
	exitTestFailed    = exitMeaning{ExitTestFailed, "a test failed"}
	exitFixtureFailed = exitMeaning{ExitTestFailed, "a fixture got another answer, or the policy failed on it"}

	exitWaitComplete = exitMeaning{ExitOK, "success; with --wait, the rollout is complete"}
	exitWaitUsage    = exitMeaning{ExitUsage, "usage error, the API server could not be reached or refused a request (the message says which), or with --wait the set was deleted"}
	exitWaitStuck    = exitMeaning{ExitStuck, "--wait: the rollout is stuck: the set's progress deadline passed (Progressing=False ProgressDeadlineExceeded, or RolledBack), or InPlaceOnly holds a pod"}
	exitWaitLimit    = exitMeaning{ExitLimit, "--wait: --wait-timeout passed, or SIGINT or SIGTERM came, before the rollout ended"}

	exitStuck  = exitMeaning{ExitStuck, "the rollout ends stuck (a pod never becomes Ready, an OrderedReady set blocked, ...); --fail-on stuck"}
	exitLimit  = exitMeaning{ExitLimit, "the replay reached its step or time limit (or --replay-timeout) before the rollout settled; --fail-on limit"}
	exitFailOn = exitMeaning{ExitFailOn, "a warning named in --fail-on was found, e.g. --fail-on data-loss, or policy-failed (a policy of the set trapped, timed out or answered out of contract, and held nothing back)"}
	exitHeld   = exitMeaning{ExitHeld, "the rollout ends held by a policy (a window not open, an approval not given: every pod Ready, and nothing but the hold keeps it from going on); --fail-on held"}
)

// commandExitCodes is what each command can return, by its path: its help lists these (documentExitCodes).
// Cobra's own commands (help, completion) and commands that only group others are not listed.
var commandExitCodes = map[string][]exitMeaning{
	"ordinal reconcile":       {exitPlanPrinted, exitBadSnapshot, exitRejected, exitSyncFailed, exitModuleFailed},
	"ordinal replay":          {exitRolloutPassed, exitBadWorld, exitWorldRejected, exitModuleFailed, exitGoldenDiffers, exitStuck, exitLimit, exitFailOn, exitHeld},
	"ordinal preview":         {exitRolloutPassed, exitBadWorld, exitWorldRejected, exitModuleFailed, exitStuck, exitLimit, exitFailOn, exitHeld},
	"ordinal version":         {exitOK, exitVersionFail, exitModuleLoad},
	"ordinal snapshot":        {exitOK, exitLiveUsage},
	"ordinal controller":      {exitStopped, exitLeaseLost, exitModulesLoad},
	"ordinal webhook":         {exitStopped, exitServeFailed, exitModulesLoad},
	"ordinal test":            {exitTestsPassed, exitTestInputs, exitTestRejected, exitTestModule, exitTestFailed},
	"ordinal policy test":     {exitFixturesPass, exitFixtureBad, exitPolicyLoad, exitFixtureFailed},
	"ordinal policy fixtures": {exitOK, exitUsage},

	"kubectl ordinal preview":  {exitRolloutPassed, exitLivePreview, exitWorldRejected, exitModuleFailed, exitStuck, exitLimit, exitFailOn, exitHeld},
	"kubectl ordinal timeline": {exitOK, exitLiveUsage, exitWorldRejected, exitModuleFailed},
	"kubectl ordinal snapshot": {exitOK, exitLiveUsage},
	"kubectl ordinal status":   {exitWaitComplete, exitWaitUsage, exitGatesRejected, exitModuleFailed, exitWaitStuck, exitWaitLimit},
	"kubectl ordinal history":  {exitOK, exitLiveUsage},
	"kubectl ordinal migrate":  {exitMigrated, exitMigrateFail},
	"kubectl ordinal restart":  {exitOK, exitLiveUsage},
	"kubectl ordinal pause":    {exitOK, exitLiveUsage},
	"kubectl ordinal resume":   {exitOK, exitLiveUsage},
	"kubectl ordinal undo":     {exitOK, exitLiveUsage},
}

// rootExitCodes is the root commands' exit codes: theirs, and where the others are told.
var rootExitCodes = exitCodesText([]exitMeaning{exitOK, exitUsage}) + `
Other codes are a command's own: its --help lists the codes it can return and what each means there.`

// documentExitCodes ends the help description of every command under root that commandExitCodes lists
// with its exit codes (root's own are printed after its list of commands: exitCodesAfterCommands).
func documentExitCodes(root *cobra.Command) {
	var walk func(c *cobra.Command)
	walk = func(c *cobra.Command) {
		if codes, ok := commandExitCodes[c.CommandPath()]; ok {
			withExitCodes(c, codes...)
		}
		for _, sub := range c.Commands() {
			walk(sub)
		}
	}
	walk(root)
}

// withExitCodes ends c's help description with the exit codes it can return.
func withExitCodes(c *cobra.Command, codes ...exitMeaning) {
	appendHelp(c, exitCodesText(codes))
}

// exitCodesText is the "Exit codes:" block of a help text, each meaning wrapped to helpWidth.
func exitCodesText(codes []exitMeaning) string {
	var b strings.Builder
	b.WriteString("Exit codes:")
	rollout, failOn := 0, false // several rollout codes apply at once only where --fail-on adds its own
	for _, m := range codes {
		prefix := fmt.Sprintf("  %d  ", m.code)
		for i, l := range wrapWords(m.text, helpWidth-len(prefix)) {
			if i > 0 {
				prefix = strings.Repeat(" ", len(prefix))
			}
			b.WriteString("\n" + prefix + l)
		}
		if m.code >= ExitStuck {
			rollout++
		}
		failOn = failOn || m.code == ExitFailOn
	}
	if rollout > 1 && failOn {
		b.WriteString("\nWhen several apply, the lowest code is the exit code.")
	}
	return b.String()
}
