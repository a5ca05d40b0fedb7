package controller

import (
	"context"
	"time"

	"k8s.io/apimachinery/pkg/util/wait"
	"k8s.io/client-go/discovery"
	"k8s.io/klog/v2"
)

// reachabilityInterval is how often the controller checks that it can reach the API server.
const reachabilityInterval = 10 * time.Second

// watchReachability logs, at the default verbosity, when the API server cannot be reached and when it can
// again. client-go's informers retry a refused or broken connection quietly (their messages are at -v 2),
// so without this a controller pointed at the wrong address, or cut off from it, says only that its
// caches never synced. It asks for /version, which every authenticated identity may read, every
// interval; a failure that lasts is logged again once a minute.
func watchReachability(ctx context.Context, client discovery.DiscoveryInterface, interval time.Duration) {
	logger := klog.FromContext(ctx)
	var down time.Time    // when the current outage began (zero: reachable)
	var lastLog time.Time // when the outage was last logged
	wait.UntilWithContext(ctx, func(ctx context.Context) {
		_, err := client.ServerVersion()
		now := time.Now()
		switch {
		case err != nil && ctx.Err() != nil:
		case err != nil && down.IsZero():
			down, lastLog = now, now
			logger.Error(err, "Cannot reach the API server")
		case err != nil && now.Sub(lastLog) >= time.Minute:
			lastLog = now
			logger.Error(err, "Still cannot reach the API server", "for", now.Sub(down).Round(time.Second).String())
		case err == nil && !down.IsZero():
			logger.Info("Reached the API server again", "after", now.Sub(down).Round(time.Second).String())
			down = time.Time{}
		}
	}, interval)
}
