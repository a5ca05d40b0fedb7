package cli

import (
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/client-go/kubernetes"

	"github.com/ordinal-dev/ordinal/host/crd"
	"github.com/ordinal-dev/ordinal/host/snapshot"
)

func newSnapshotCommand() *cobra.Command {
	var kube kubeOptions
	var out, featureGates string
	cmd := &cobra.Command{
		Use:   "snapshot statefulset/NAME|statefulsets.ordinal.dev/NAME [-n NS] [-o json|yaml]",
		Short: "Write the snapshot the controller would build for a StatefulSet, from the live cluster",
		Long: `snapshot reads a StatefulSet and the Pods, ControllerRevisions and PersistentVolumeClaims of its namespace
with live GET/List calls and writes the ABI v1 snapshot the controller would build for it right now: the same
code as the controller's snapshot builder (the same selection of objects, sorted by name, each as the API
server returns it, "now" from the clock). Attach it to a bug report, or run the module on it:

  ordinal snapshot statefulset/web -n prod > web.snapshot.json
  ordinal reconcile -f web.snapshot.json                 # the next sync's plan
  ordinal replay -f web.snapshot.json                    # the rollout from there, in virtual time
  ordinal preview -f web.yaml --from web.snapshot.json   # what an edit will do

The namespace defaults to the kubeconfig context's, else "default".`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			target, name, err := parseSetArg(args[0])
			if err != nil {
				return withCode(ExitUsage, err)
			}
			features, err := parseFeatureGates(featureGates)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			cfg, ctxNS, err := kube.restConfig()
			if err != nil {
				return withCode(ExitUsage, err)
			}
			ns := kube.namespace
			if ns == "" {
				ns = ctxNS
			}
			if ns == "" {
				ns = "default"
			}
			client, err := kubernetes.NewForConfig(cfg)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			ctx := cmdContext(cmd)
			snap, _, err := snapshot.Live(ctx, client, target, ns, name, time.Now(), features)
			if err != nil {
				return withCode(ExitUsage, otherKindHint(ctx, client, target, ns, name, err))
			}
			data := append(snap.JSON, '\n')
			switch out {
			case "json", "yaml", "", "-":
			default:
				// -o FILE, before -o followed kubectl: still written, with a note.
				if err := os.WriteFile(out, data, 0o644); err != nil {
					return withCode(ExitUsage, err)
				}
				fmt.Fprintf(cmd.ErrOrStderr(), "wrote %s: StatefulSet %s/%s, %d pods, %d revisions, %d claims (-o FILE is deprecated: -o json > FILE)\n",
					out, ns, name, snap.Pods, snap.Revisions, snap.Claims)
				return nil
			}
			format := "json"
			if out == "yaml" {
				format = "yaml"
			}
			if err := writeJSONAs(cmd.OutOrStdout(), format, func(w io.Writer) error { _, err := w.Write(data); return err }); err != nil {
				return withCode(ExitUsage, err)
			}
			return nil
		},
	}
	kube.bind(cmd, "namespace of the set (default: the context's)")
	kube.bindRequestTimeout(cmd.Flags())
	cmd.Flags().StringVarP(&out, "output", "o", "json", "output format: json or yaml (the snapshot)")
	cmd.Flags().StringVar(&featureGates, "feature-gates", "", "feature-gate overrides to put in the snapshot")
	return cmd
}

// setArgError names every way to write a set, Ordinal's short kind osts included: a newcomer told only
// "statefulsets.ordinal.dev/NAME" had not met the osts/NAME the guides use.
func setArgError(s string) error {
	return fmt.Errorf("want statefulset/NAME (apps/v1) or osts/NAME (statefulsets.%s), got %q", crd.Group, s)
}

// parseSetArg reads a set argument as kubectl names the kinds: statefulset/NAME, statefulsets/NAME,
// sts/NAME, statefulset.apps/NAME or a bare NAME (apps/v1), and statefulset.ordinal.dev/NAME,
// statefulsets.ordinal.dev/NAME or osts/NAME (Ordinal's own kind).
func parseSetArg(s string) (snapshot.Target, string, error) {
	kind, name, ok := strings.Cut(s, "/")
	if !ok {
		name, kind = s, "statefulset"
	}
	var t snapshot.Target
	switch strings.ToLower(kind) {
	case "statefulset", "statefulsets", "sts", "statefulset.apps", "statefulsets.apps":
		t = snapshot.StatefulSetTarget
	case "statefulset." + crd.Group, "statefulsets." + crd.Group, "osts":
		t = snapshot.CRDTarget
	default:
		return t, "", setArgError(s)
	}
	if name == "" {
		return t, "", setArgError(s)
	}
	// A StatefulSet's name is a DNS subdomain (no '/', no ".."): anything else never reaches a URL path.
	if msgs := validation.IsDNS1123Subdomain(name); len(msgs) > 0 {
		return t, "", fmt.Errorf("%q is not a StatefulSet name: %s", name, strings.Join(msgs, "; "))
	}
	return t, name, nil
}
