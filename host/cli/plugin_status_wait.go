package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/rollout"
)

// rolloutWait is `kubectl ordinal status --wait`: the watch ends when the rollout does (rollout.Status.Ended)
// and exits by how — 0 complete, ExitStuck stuck, ExitLimit when --wait-timeout or an interrupt comes first:
// a CI step that runs it under `timeout` must never read an unfinished rollout as success.
type rolloutWait struct {
	on      bool
	timeout time.Duration
	started time.Time
	since   int64 // the set's generation when the wait began (rollout.Status.Ended)
}

func (w *rolloutWait) bind(cmd *cobra.Command) {
	cmd.Flags().BoolVar(&w.on, "wait", false, "watch until the rollout ends; the exit code says how")
	cmd.Flags().DurationVar(&w.timeout, "wait-timeout", 0, "with --wait, the longest wait (0: no limit)")
}

// check refuses --wait-timeout without --wait, or negative; the timeout counts from here.
func (w *rolloutWait) check(cmd *cobra.Command) error {
	w.started = time.Now()
	switch {
	case cmd.Flags().Changed("wait-timeout") && !w.on:
		return errors.New("--wait-timeout is --wait's: add --wait")
	case w.timeout < 0:
		return fmt.Errorf("--wait-timeout %s: want 0 (no limit) or a positive duration", w.timeout)
	}
	return nil
}

// deadline fires when --wait-timeout has passed; never without one (or for --watch: w nil).
func (w *rolloutWait) deadline() <-chan time.Time {
	if w == nil || w.timeout == 0 {
		return nil
	}
	return time.After(w.timeout - time.Since(w.started))
}

// ended shows the last view and exits by how the rollout ended.
func (w *rolloutWait) ended(show func(*statusFrame, bool) error, v *statusFrame, end rollout.Ending, why string) error {
	if err := show(v, true); err != nil {
		return err
	}
	switch end {
	case rollout.Stuck:
		return withCode(ExitStuck, fmt.Errorf("the rollout is stuck: %s", why))
	case rollout.Gone:
		return withCode(ExitUsage, fmt.Errorf("%s: deleted while its rollout was waited on", why))
	}
	return nil
}

// timedOut shows the last view and says where the rollout was when --wait-timeout passed.
func (w *rolloutWait) timedOut(show func(*statusFrame, bool) error, v *statusFrame) error {
	if err := show(v, true); err != nil {
		return err
	}
	return withCode(ExitLimit, fmt.Errorf("--wait-timeout %s passed before the rollout ended: %s", w.timeout, stateLine(v)))
}

// interrupted is the exit of a wait stopped by SIGINT or SIGTERM (last: the latest view, if any, shown as
// the last view when show is given, as at --wait-timeout, so -o json|yaml still prints its one document);
// nil without --wait (w nil or off), where an interrupt is how the watch ends.
func (w *rolloutWait) interrupted(show func(*statusFrame, bool) error, last *statusFrame) error {
	if w == nil || !w.on {
		return nil
	}
	if last == nil {
		return withCode(ExitLimit, errors.New("interrupted before the rollout ended"))
	}
	if show != nil {
		if err := show(last, true); err != nil {
			return err
		}
	}
	return withCode(ExitLimit, fmt.Errorf("interrupted before the rollout ended: %s", stateLine(last)))
}

func stateLine(v *statusFrame) string { return v.st.State + ": " + v.st.Why() }
