package cli

import (
	"time"

	"github.com/ordinal-dev/ordinal/host/replay"
)

// The ranges of the webhook's numeric flags (flag_ranges.go says why they are checked first). Out of
// range, 0 and negative values were taken for the defaults without a word.
const (
	// maxWebhookConnections bounds --max-connections and --max-unauthenticated-connections: each open
	// connection holds its TLS and HTTP buffers
	maxWebhookConnections = 10000
	// maxConcurrentPreviews: each preview runs a module instance of up to --memory-limit-mib
	maxConcurrentPreviews = 64
	// maxWaitingReviews: each waiting review holds its request body (up to 8 MiB)
	maxWaitingReviews = 4096
	maxPreviewSyncs   = 1000000
	// maxReviewTimeout is the longest timeoutSeconds an API server allows a webhook
	maxReviewTimeout = 30 * time.Second
)

// checkRanges reports the first numeric flag out of its range.
func (o *webhookOptions) checkRanges() error {
	return firstOutOfRange(
		durationIn("--tls-handshake-timeout", o.serve.HandshakeTimeout, false, 0),
		intIn("--max-unauthenticated-connections", o.serve.MaxUnauthenticatedConnections, 1, maxWebhookConnections),
		durationIn("--read-header-timeout", o.serve.ReadHeaderTimeout, false, 0),
		durationIn("--read-timeout", o.serve.ReadTimeout, false, 0),
		durationIn("--idle-timeout", o.serve.IdleTimeout, false, 0),
		intIn("--max-connections", o.serve.MaxConnections, 1, maxWebhookConnections),
		durationIn("--preview-timeout", o.timeout, false, maxReviewTimeout),
		intIn("--max-concurrent-previews", o.maxConcurrent, 1, maxConcurrentPreviews),
		intIn("--max-preview-syncs", o.previewSyncs, 0, maxPreviewSyncs),
		intIn("--max-waiting-reviews", o.maxWaiting, 0, maxWaitingReviews),
		intIn("--max-replicas", o.maxReplicas, 1, replay.MaxReplicasEver),
		intIn("-v", o.verbosity, 0, maxVerbosity),
		o.kube.checkRate,
	)
}
