package controller

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/leaderelection"
	"k8s.io/client-go/tools/leaderelection/resourcelock"
	"k8s.io/klog/v2"
)

// LeaderElection configures coordination.k8s.io Lease leader election.
type LeaderElection struct {
	Namespace, Name, Identity string
	LeaseDuration             time.Duration // default 15s
	RenewDeadline             time.Duration // default 10s
	RetryPeriod               time.Duration // default 2s
	// Watchdog, if set, makes /healthz fail when this replica leads but has not
	// renewed its lease for longer than the adaptor's timeout.
	Watchdog *leaderelection.HealthzAdaptor
}

// defaults fills the durations not set (kube-controller-manager's).
func (le *LeaderElection) defaults() {
	if le.LeaseDuration == 0 {
		le.LeaseDuration = 15 * time.Second
	}
	if le.RenewDeadline == 0 {
		le.RenewDeadline = 10 * time.Second
	}
	if le.RetryPeriod == 0 {
		le.RetryPeriod = 2 * time.Second
	}
}

// ErrLeaderElectionLost is returned when the lease is lost while leading; the
// process should exit and restart (as kube-controller-manager does).
var ErrLeaderElectionLost = errors.New("leader election lost")

// RunLeaderElected runs run(ctx) only while this process holds the lease.
// Standbys wait. On ctx cancellation (SIGTERM) the leader first stops run and
// waits for it to return, so syncs in flight finish, and only then releases
// the lease, so the next leader starts on a quiet cluster. leading is told
// about every change of leadership.
func RunLeaderElected(ctx context.Context, client kubernetes.Interface, le LeaderElection,
	leading func(bool), run func(context.Context) error) error {
	logger := klog.FromContext(ctx)
	le.defaults()
	lock := &resourcelock.LeaseLock{
		LeaseMeta:  metav1.ObjectMeta{Namespace: le.Namespace, Name: le.Name},
		Client:     client.CoordinationV1(),
		LockConfig: resourcelock.ResourceLockConfig{Identity: le.Identity},
	}
	// The elector's context is not ctx: on SIGTERM the lease is released only
	// after run has returned.
	leCtx, leCancel := context.WithCancel(context.WithoutCancel(ctx))
	defer leCancel()
	var started atomic.Bool
	runDone := make(chan error, 1)
	elector, err := leaderelection.NewLeaderElector(leaderelection.LeaderElectionConfig{
		Lock:            lock,
		LeaseDuration:   le.LeaseDuration,
		RenewDeadline:   le.RenewDeadline,
		RetryPeriod:     le.RetryPeriod,
		ReleaseOnCancel: true,
		Name:            le.Name,
		WatchDog:        le.Watchdog,
		Callbacks: leaderelection.LeaderCallbacks{
			OnStartedLeading: func(lctx context.Context) {
				started.Store(true)
				logger.Info("Became leader", "lease", le.Namespace+"/"+le.Name, "identity", le.Identity)
				leading(true)
				rctx, rcancel := context.WithCancel(lctx)
				stop := context.AfterFunc(ctx, rcancel)
				err := run(rctx)
				stop()
				rcancel()
				runDone <- err
				leCancel() // drained: release the lease
			},
			OnStoppedLeading: func() {
				leading(false)
				if started.Load() {
					logger.Info("Stopped leading", "lease", le.Namespace+"/"+le.Name, "identity", le.Identity)
				}
			},
			OnNewLeader: func(id string) {
				if id != le.Identity {
					logger.Info("Another replica leads; standing by", "leader", id, "lease", le.Namespace+"/"+le.Name)
				}
			},
		},
	})
	if err != nil {
		return fmt.Errorf("leader election: %w", err)
	}
	stopStandby := context.AfterFunc(ctx, func() {
		if !started.Load() {
			leCancel()
		}
	})
	defer stopStandby()
	elector.Run(leCtx)
	if !started.Load() {
		return nil
	}
	runErr := <-runDone
	if ctx.Err() == nil {
		if runErr != nil {
			return runErr
		}
		return ErrLeaderElectionLost
	}
	return runErr
}
