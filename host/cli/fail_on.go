package cli

import (
	"fmt"
	"sort"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/abi"
	"github.com/ordinal-dev/ordinal/host/replay"
)

// failOnNames are the --fail-on conditions. stuck, limit and held are outcomes; the others are the preview's
// warnings (by code, or kebab-case, or an alias); replay knows only the outcomes, data-loss and policy-failed.
var failOnNames = map[string]string{
	"stuck":                            "stuck",
	"limit":                            "limit",
	"held":                             replay.OutcomeHeld,
	"policy-failed":                    replay.WarnPolicyFailed,
	"data-loss":                        replay.WarnClaimsDeleted,
	"claims-deleted":                   replay.WarnClaimsDeleted,
	"ordered-ready-blocked":            replay.WarnOrderedReadyBlocked,
	"max-unavailable-counts-held-back": replay.WarnMaxUnavailableCountsHeldBack,
	"max-unavailable-ignored":          replay.WarnMaxUnavailableIgnored,
	"on-delete":                        replay.WarnOnDelete,
	"unfinished":                       replay.WarnUnfinished,
	"unrecoverable":                    replay.WarnUnrecoverable,
	"unknown-annotation":               replay.WarnUnknownAnnotation,
	"extension-ignored":                replay.WarnExtensionIgnored,
	"invalid-extension-value":          replay.WarnInvalidExtensionValue,
	"invalid-annotation":               replay.WarnInvalidAnnotation,
	"progress-deadline-exceeded":       replay.WarnProgressDeadlineExceeded,
}

// previewFailOnHelp and replayFailOnHelp say what --fail-on takes in each: a replay judges only its outcome,
// deleted claims and failed policies, so its help does not list the preview's warnings.
const previewFailOnHelp = `--fail-on lists what fails the command (comma-separated; none: nothing): stuck (exit 6),
limit (exit 7), held (exit 9: the rollout ends waiting on a policy's hold), and for exit 8 data-loss (PVCs
deleted; alias claims-deleted), policy-failed (a policy failed and held nothing back), and the preview
warnings ordered-ready-blocked, max-unavailable-counts-held-back, max-unavailable-ignored, on-delete,
unfinished and unrecoverable (if the new revision never becomes Ready, reverting the template alone does
not recover the rollout and no recovery is configured), and of the set's ordinal.dev/ annotations
unknown-annotation (a key nothing reads: a misspelling), extension-ignored (an extension the set's module
lacks), invalid-extension-value (a value outside the list of such an extension) and invalid-annotation (a
value the set's module cannot read), and progress-deadline-exceeded (the rollout passed the set's
ordinal.dev/progress-deadline-seconds: reported, paused or rolled back).
` + replayTimeoutHelp

const replayFailOnHelp = `--fail-on lists what fails the command (comma-separated; none: nothing): stuck (exit 6),
limit (exit 7), held (exit 9: the rollout ends waiting on a policy's hold), and for exit 8 data-loss (the
garbage collector deleted PVCs; alias claims-deleted) and policy-failed (a policy failed and held nothing
back). The warnings of an edit are ordinal preview's.
` + replayTimeoutHelp

const replayTimeoutHelp = `--replay-timeout bounds the whole command in wall-clock time: reached, the replay stops at the next sync as
at its step limit (exit 7, --fail-on limit) and the rollout so far is printed.`

// replayFailOn are the conditions a replay judges (outcomes and the warnings of replayWarnings).
var replayFailOn = map[string]bool{"stuck": true, "limit": true, replay.OutcomeHeld: true, replay.WarnClaimsDeleted: true, replay.WarnPolicyFailed: true}

// failOn is a parsed --fail-on list: outcome and warning codes.
type failOn map[string]bool

func parseFailOn(list string, previewWarnings bool) (failOn, error) {
	f := failOn{}
	names := strings.Split(list, ",")
	if strings.TrimSpace(strings.ReplaceAll(list, ",", "")) == "" {
		// An unset variable in a CI line (--fail-on "$FAIL_ON") must not switch the gate off.
		return nil, withCode(ExitUsage, fmt.Errorf("--fail-on is empty: name the conditions, or none"))
	}
	for _, n := range names {
		n = strings.TrimSpace(n)
		if n == "" {
			continue
		}
		if n == "none" {
			if len(names) > 1 {
				return nil, withCode(ExitUsage, fmt.Errorf("--fail-on %q: none excludes the other conditions", list))
			}
			continue
		}
		code, ok := failOnNames[strings.ToLower(n)]
		if !ok {
			for _, c := range failOnNames {
				if c == n { // a warning code as the JSON output spells it, e.g. ClaimsDeleted
					code, ok = c, true
				}
			}
		}
		if !ok {
			names := make([]string, 0, len(failOnNames))
			for k := range failOnNames {
				names = append(names, k)
			}
			sort.Strings(names)
			return nil, withCode(ExitUsage, fmt.Errorf("--fail-on %q: not one of none, %s", n, strings.Join(names, ", ")))
		}
		if !previewWarnings && !replayFailOn[code] {
			return nil, withCode(ExitUsage, fmt.Errorf("--fail-on %s: a preview warning; replay knows stuck, limit, held, data-loss and policy-failed", n))
		}
		f[code] = true
	}
	return f, nil
}

// verdict is the exit for a rollout that ended with result and showed the warnings: nil when nothing
// named in f applies.
func (f failOn) verdict(o replay.Outcome, warnings []replay.Warning) error {
	switch {
	case o.Result == "stuck" && f["stuck"]:
		return withCode(ExitStuck, fmt.Errorf("the rollout is stuck: %s", o.Summary))
	case o.Result == "limit" && f["limit"]:
		return withCode(ExitLimit, fmt.Errorf("the replay reached its limit before the rollout settled: %s", o.Summary))
	}
	var hit []string
	for _, w := range warnings {
		if f[w.Code] {
			hit = append(hit, w.Code+": "+w.Message)
		}
	}
	if len(hit) > 0 {
		return withCode(ExitFailOn, fmt.Errorf("--fail-on: %s", strings.Join(hit, "; ")))
	}
	if o.Result == replay.OutcomeHeld && f[replay.OutcomeHeld] {
		return withCode(ExitHeld, fmt.Errorf("the rollout is held by a policy: %s", o.Summary))
	}
	return nil
}

// replayWarnings are the --fail-on warnings a replay's timeline shows: the policies that failed
// (policy-failed), PVCs the garbage collector deleted (data-loss).
func replayWarnings(tl *replay.Timeline) []replay.Warning {
	var out []replay.Warning
	for _, f := range tl.PolicyFailures {
		out = append(out, replay.Warning{Code: replay.WarnPolicyFailed, Message: replay.PolicyFailureText(f)})
	}
	var claims []string
	for _, st := range tl.Steps {
		for _, w := range st.World {
			if w.Source == "gc" && w.Kind == abi.KindPersistentVolumeClaim && w.Reason == replay.ReasonDeleted {
				claims = append(claims, w.Name)
			}
		}
	}
	if len(claims) > 0 {
		out = append(out, replay.Warning{Code: replay.WarnClaimsDeleted, Message: "the garbage collector deleted PersistentVolumeClaims " + strings.Join(claims, ", ")})
	}
	return out
}

// rolloutFlags are the flags of the commands that replay a rollout and judge it (replay, preview,
// kubectl ordinal preview): the kubelet model and --fail-on, checked together before any work.
type rolloutFlags struct {
	model, failOn string
	timeout       time.Duration // --replay-timeout
	start         time.Time     // when the command started (parse), from which the timeout counts
}

func (r *rolloutFlags) bind(cmd *cobra.Command, modelHelp string, previewWarnings bool) {
	f := cmd.Flags()
	f.StringVar(&r.model, "model", "", modelHelp)
	f.StringVar(&r.failOn, "fail-on", "stuck,limit", "conditions that fail the command")
	// Not --timeout: that one bounds each call into the module, as in every command.
	f.DurationVar(&r.timeout, "replay-timeout", 0, "wall-clock limit of the whole command (0: none)")
	if previewWarnings {
		appendHelp(cmd, previewFailOnHelp)
	} else {
		appendHelp(cmd, replayFailOnHelp)
	}
}

// budget is the replay's Budget for --replay-timeout: the engine's own bound on wall-clock time (the
// webhook's deadline), ending the replay as a limit (outcome "limit", exit 7), not as a preview's budget.
func (r *rolloutFlags) budget() replay.Budget {
	if r.timeout == 0 {
		return replay.Budget{}
	}
	return replay.Budget{Deadline: r.start.Add(r.timeout), Limit: "wall-clock limit (--replay-timeout " + r.timeout.String() + ")"}
}

// parse checks the model and returns the --fail-on conditions (previewWarnings: the preview's warnings
// may be named, not only the outcomes and data-loss).
func (r *rolloutFlags) parse(previewWarnings bool) (failOn, error) {
	r.start = time.Now()
	if err := checkModel(r.model); err != nil {
		return nil, err
	}
	if r.timeout < 0 {
		return nil, withCode(ExitUsage, fmt.Errorf("--replay-timeout %s: a wall-clock limit is positive, or 0 for none", r.timeout))
	}
	return parseFailOn(r.failOn, previewWarnings)
}
