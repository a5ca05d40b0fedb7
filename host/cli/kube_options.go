package cli

import (
	"fmt"
	"os"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"
	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
)

// kubeOptions are the flags that reach a cluster, shared by controller and snapshot.
type kubeOptions struct {
	kubeconfig string
	context    string
	namespace  string
	qps        float32
	burst      int
	// requestTimeout bounds each request of a one-shot command (kubectl's --request-timeout); 0: none.
	requestTimeout time.Duration
}

func (o *kubeOptions) bind(cmd *cobra.Command, namespaceHelp string) {
	f := cmd.Flags()
	f.StringVar(&o.kubeconfig, "kubeconfig", "", "path to the kubeconfig file")
	f.StringVar(&o.context, "context", "", "kubeconfig context (default: the current one)")
	f.StringVarP(&o.namespace, "namespace", "n", "", namespaceHelp)
	appendHelp(cmd, "The kubeconfig is --kubeconfig, else $KUBECONFIG, else the in-cluster service account, else ~/.kube/config.")
}

// bindRequestTimeout is kubectl's --request-timeout for commands that make a few requests and end, bounded by
// default (kubectl waits as long as the connection lasts) so that an API server that accepts a connection
// and never answers cannot hold a CI job.
func (o *kubeOptions) bindRequestTimeout(f *pflag.FlagSet) {
	f.DurationVar(&o.requestTimeout, "request-timeout", 30*time.Second,
		"longest wait for one API request (0: no limit)")
}

// The ranges of --kube-api-qps and --kube-api-burst: client-go takes a QPS of 0 or less for its default
// of 5 (or for no limit at all), and refuses a burst of 0 or less only once it builds a client.
const (
	maxKubeAPIQPS   = 10000
	maxKubeAPIBurst = 10000
)

func (o *kubeOptions) bindRate(cmd *cobra.Command) {
	cmd.Flags().Float32Var(&o.qps, "kube-api-qps", 50, fmt.Sprintf("client-side API QPS, at most %d", maxKubeAPIQPS))
	cmd.Flags().IntVar(&o.burst, "kube-api-burst", 100, fmt.Sprintf("client-side API burst, 1 to %d", maxKubeAPIBurst))
}

// checkRate reports --kube-api-qps or --kube-api-burst out of its range; the commands that do not take
// them have them 0.
func (o *kubeOptions) checkRate() error {
	if o.qps == 0 && o.burst == 0 {
		return nil
	}
	return firstOutOfRange(rateIn("--kube-api-qps", o.qps, maxKubeAPIQPS), intIn("--kube-api-burst", o.burst, 1, maxKubeAPIBurst))
}

// checkRequestTimeout reports a negative --request-timeout (0 is no limit).
func (o *kubeOptions) checkRequestTimeout() error {
	return durationIn("--request-timeout", o.requestTimeout, true, 0)()
}

// restConfig resolves the client configuration: --kubeconfig; else $KUBECONFIG;
// else the in-cluster config; else ~/.kube/config. It also returns the
// namespace of the chosen context ("" if none or in-cluster).
func (o *kubeOptions) restConfig() (*rest.Config, string, error) {
	if err := firstOutOfRange(o.checkRate, o.checkRequestTimeout); err != nil {
		return nil, "", err
	}
	var cfg *rest.Config
	ctxNamespace := ""
	loadKubeconfig := func(rules *clientcmd.ClientConfigLoadingRules) error {
		cc := clientcmd.NewNonInteractiveDeferredLoadingClientConfig(rules, &clientcmd.ConfigOverrides{CurrentContext: o.context})
		c, err := cc.ClientConfig()
		if err != nil {
			return err
		}
		if ns, _, err := cc.Namespace(); err == nil {
			ctxNamespace = ns
		}
		cfg = c
		return nil
	}
	switch {
	case o.kubeconfig != "":
		if err := loadKubeconfig(&clientcmd.ClientConfigLoadingRules{ExplicitPath: o.kubeconfig}); err != nil {
			return nil, "", fmt.Errorf("kubeconfig %s: %w", o.kubeconfig, err)
		}
	case os.Getenv("KUBECONFIG") != "":
		if err := loadKubeconfig(clientcmd.NewDefaultClientConfigLoadingRules()); err != nil {
			if clientcmd.IsEmptyConfig(err) { // client-go skips missing files; say which, not "set KUBERNETES_MASTER"
				return nil, "", fmt.Errorf("$KUBECONFIG=%s: no configuration in it (no such file, or empty)", os.Getenv("KUBECONFIG"))
			}
			return nil, "", fmt.Errorf("$KUBECONFIG: %w", err)
		}
	default:
		c, err := rest.InClusterConfig()
		if err == nil && o.context == "" {
			cfg = c
			if b, err := os.ReadFile("/var/run/secrets/kubernetes.io/serviceaccount/namespace"); err == nil {
				ctxNamespace = string(b)
			}
			break
		}
		if err := loadKubeconfig(clientcmd.NewDefaultClientConfigLoadingRules()); err != nil {
			if clientcmd.IsEmptyConfig(err) { // no file: client-go's answer is "try setting KUBERNETES_MASTER"
				return nil, "", fmt.Errorf("no cluster to reach: no --kubeconfig, no $KUBECONFIG, not in a cluster, and no %s "+
					"(or it is empty); --kubeconfig FILE names a cluster's kubeconfig", clientcmd.RecommendedHomeFile)
			}
			return nil, "", fmt.Errorf("no --kubeconfig, no $KUBECONFIG, not in a cluster, and %s: %w", clientcmd.RecommendedHomeFile, err)
		}
	}
	// Objects travel as JSON, exactly as the API server encodes them (see host/snapshot).
	cfg.ContentType = "application/json"
	cfg.AcceptContentTypes = "application/json"
	if o.qps > 0 { // checkRate: 0 only for a command without the flags
		cfg.QPS, cfg.Burst = o.qps, o.burst
	}
	cfg.Timeout = o.requestTimeout
	if cfg.UserAgent == "" {
		cfg.UserAgent = "ordinal/" + hostVersion()
	}
	return cfg, ctxNamespace, nil
}
