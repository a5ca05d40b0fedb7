package cli

import (
	"fmt"
)

// The ranges of the controller's own numeric flags (flag_ranges.go says why they are checked first).
const (
	maxWorkers   = 1000 // concurrent syncs; kube-controller-manager's --concurrent-statefulset-syncs is 5 by default
	maxShards    = 1024 // one Lease per shard and a member Lease per replica
	maxVerbosity = 10
)

// checkRanges reports the first numeric flag out of its range.
func (o *controllerOptions) checkRanges() error {
	if err := firstOutOfRange(
		intIn("--workers", o.workers, 1, maxWorkers), intIn("--shards", o.shards, 1, maxShards),
		intIn("-v", o.verbosity, 0, maxVerbosity), o.kube.checkRate, o.kube.checkRequestTimeout,
		durationIn("--resync", o.resync, true, 0), durationIn("--set-cache-idle", o.setCacheIdle, true, 0),
		durationIn("--stale-timeout", o.staleTimeout, false, 0), durationIn("--shutdown-grace", o.shutdownDeadline, true, 0),
		durationIn("--module-poll-interval", o.modulePoll, true, 0),
		durationIn("--leader-election-lease-duration", o.leaseDuration, false, 0),
		durationIn("--leader-election-renew-deadline", o.renewDeadline, false, 0),
		durationIn("--leader-election-retry-period", o.retryPeriod, false, 0),
	); err != nil {
		return err
	}
	// client-go's leader election: LeaseDuration > RenewDeadline > RetryPeriod × 1.2 (its JitterFactor)
	if o.leaseDuration <= o.renewDeadline {
		return fmt.Errorf("--leader-election-lease-duration %s must be longer than --leader-election-renew-deadline %s", o.leaseDuration, o.renewDeadline)
	}
	if float64(o.renewDeadline) <= 1.2*float64(o.retryPeriod) {
		return fmt.Errorf("--leader-election-renew-deadline %s must be longer than 1.2 × --leader-election-retry-period %s", o.renewDeadline, o.retryPeriod)
	}
	return nil
}
