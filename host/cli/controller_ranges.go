package cli

import (
	"fmt"
	"time"
)

// The ranges of the controller's numeric flags, checked before anything loads or connects: a value past
// them costs memory or time in proportion (--shards 1000000 made a Lease per shard and grew to 3 GB) or
// makes client-go's leader election refuse to start later. Each flag's help names its range.
const (
	maxWorkers   = 1000 // concurrent syncs; kube-controller-manager's --concurrent-statefulset-syncs is 5 by default
	maxShards    = 1024 // one Lease per shard and a member Lease per replica
	maxVerbosity = 10
)

// checkRanges reports the first numeric flag out of its range.
func (o *controllerOptions) checkRanges() error {
	switch {
	case o.workers < 1 || o.workers > maxWorkers:
		return fmt.Errorf("--workers %d: must be from 1 to %d", o.workers, maxWorkers)
	case o.shards < 1 || o.shards > maxShards:
		return fmt.Errorf("--shards %d: must be from 1 to %d", o.shards, maxShards)
	case o.verbosity < 0 || o.verbosity > maxVerbosity:
		return fmt.Errorf("-v %d: must be from 0 to %d", o.verbosity, maxVerbosity)
	}
	for _, d := range []struct {
		flag     string
		v        time.Duration
		positive bool
	}{
		{"--resync", o.resync, false}, {"--set-cache-idle", o.setCacheIdle, false}, {"--stale-timeout", o.staleTimeout, true},
		{"--shutdown-grace", o.shutdownDeadline, false}, {"--module-poll-interval", o.modulePoll, false},
		{"--leader-election-lease-duration", o.leaseDuration, true}, {"--leader-election-renew-deadline", o.renewDeadline, true},
		{"--leader-election-retry-period", o.retryPeriod, true},
	} {
		if d.v < 0 || d.positive && d.v == 0 {
			want := "0 or a positive duration"
			if d.positive {
				want = "a positive duration"
			}
			return fmt.Errorf("%s %s: must be %s", d.flag, d.v, want)
		}
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
