package cli

import (
	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/rollout"
)

func newPluginHistory(o *pluginOptions) *cobra.Command {
	return &cobra.Command{
		Use:   "history statefulset/NAME",
		Short: "List the set's revisions, oldest first, with the pod-template changes each made",
		Long: `history lists the set's ControllerRevisions like ` + "`kubectl rollout history`" + ` (number, name, pods at the
revision, creation time, the kubernetes.io/change-cause annotation, which is current and which the update
revision) and, for each revision after the first, the pod-template fields it changed:
  ~ spec.containers[app].image: "app:1" -> "app:2"
(list items with a name are named; + added, - removed). Older revisions than revisionHistoryLimit keeps
are gone from the cluster and so from the list.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error {
			format, err := o.format()
			if err != nil {
				return err
			}
			live, err := o.liveSetSnapshot(cmd, args[0], "")
			if err != nil {
				return err
			}
			h, err := rollout.HistoryOf(live.snap.JSON)
			if err != nil {
				return withCode(ExitUsage, err)
			}
			return writeFormatted(cmd.OutOrStdout(), format, h, h.WriteText)
		},
	}
}
