package cli

import (
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/preview"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/internal/yamljson"
)

func newPreviewCommand(opts *moduleOptions) *cobra.Command {
	var file, from, scenario, htmlOut string
	var rollout rolloutFlags
	var output outputFlag
	var namespace string
	var validate validateFlag
	cmd := &cobra.Command{
		Use:   "preview -f edited.yaml (--from snapshot.json | --scenario scenario.yaml)",
		Short: "Show what applying an edited StatefulSet will do: steps, batches, duration, traps",
		Long: `preview applies an edited StatefulSet manifest to a world and replays it with the same engine as
` + "`ordinal replay`" + ` (the reconcile module, an in-memory API server and the kubelet model), so the steps are what the
controller will do. The world is a snapshot (--from: ABI v1, JSON or YAML, as ` + "`ordinal reconcile`" + ` reads it, or a kubectl
List of the set and its objects, of which -n picks the set when it holds several) or the end
state of a scenario (--scenario). It prints the steps until the rollout completes or stops, the batches of pods
taken down together, the pods a partition holds back, how long it takes under the kubelet model, and warnings
for known traps (OrderedReady with a pod that is not Ready blocks everything; whenScaled=Delete deletes PVCs;
maxUnavailable counts unavailable pods below the partition).

  --html FILE     also write a self-contained page with the previewed rollout as a picture
                  (pods x time), the same picture as ` + "`ordinal replay --html`",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := checkPreviewInputs(cmd, file, from, scenario); err != nil {
				return err
			}
			format, err := output.resolve(cmd)
			if err != nil {
				return err
			}
			fail, err := rollout.parse(true)
			if err != nil {
				return err
			}
			if err := checkHTMLPath(htmlOut); err != nil {
				return err
			}
			v, err := validate.resolve(cmd)
			if err != nil {
				return err
			}
			edited, err := readEditedSet(cmd, opts, file, v)
			if err != nil {
				return err
			}
			mods := opts.commandModules()
			defer mods.close()
			var base *replay.Scenario
			if from != "" {
				base, err = snapshotWorld(cmd, mods, from, namespace, edited, v, rollout.model)
			} else {
				base, err = settledWorld(cmd, mods, scenario, &rollout, format, v)
			}
			if err != nil {
				return err
			}
			p, err := previewEdit(cmd, mods, base, edited, &rollout, format)
			if err != nil {
				return err
			}
			mods.close()
			if err := writePreview(cmd, p, format, htmlOut); err != nil {
				return err
			}
			return fail.verdict(p.Outcome, p.Warnings)
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "filename", "f", "", "the edited StatefulSet (YAML or JSON), or - for standard input")
	f.SetNormalizeFunc(filenameAlias)
	f.StringVar(&from, "from", "", "the current world: a snapshot or a kubectl List")
	f.StringVar(&scenario, "scenario", "", "the current world: the end state of this scenario")
	f.StringVarP(&namespace, "namespace", "n", "", "the set's namespace, if the manifest has none")
	rollout.bind(cmd, `kubelet model: "delays" (default) or "tick"`, true)
	addOutputFlag(cmd, &output, "text, json or yaml")
	f.StringVar(&htmlOut, "html", "", "write an HTML picture of the previewed rollout to this file")
	validate.bind(cmd)
	return cmd
}

// checkPreviewInputs refuses a preview without an edit, without exactly one world to preview it against, or
// with more than one input on standard input.
func checkPreviewInputs(cmd *cobra.Command, file, from, scenario string) error {
	switch {
	case file == "":
		return withCode(ExitUsage, fmt.Errorf("need -f, the edited StatefulSet manifest; usage: %s", cmd.UseLine()))
	case from == "" && scenario == "":
		// A newcomer has a manifest and no snapshot yet: say where one comes from.
		return withCode(ExitUsage, errors.New("need the world to preview the edit against: --from SNAPSHOT (a live set's: "+
			"kubectl ordinal snapshot statefulset/NAME > FILE; or kubectl ordinal preview -f FILE against the live set "+
			"itself) or --scenario SCENARIO (the end state of a replay)"))
	case from != "" && scenario != "":
		return withCode(ExitUsage, errors.New("--from and --scenario both name the world to preview against: give one"))
	}
	if stdin := 0 + btoi(file == "-") + btoi(from == "-") + btoi(scenario == "-"); stdin > 1 {
		return withCode(ExitUsage, fmt.Errorf("only one of -f, --from and --scenario can be - (standard input)"))
	}
	return nil
}

// readEditedSet reads the edited StatefulSet of -f as JSON, its unknown fields v's to judge.
func readEditedSet(cmd *cobra.Command, opts *moduleOptions, file string, v fieldValidation) ([]byte, error) {
	edited, err := opts.readDocument(cmd.InOrStdin(), file, "edited StatefulSet")
	if err != nil {
		return nil, err
	}
	switch in := recognise(edited, opts.inputLimit()); in.kind {
	case inputManifest:
		edited = in.json
	case inputUnknown:
		if err := in.unreadable(file, "a StatefulSet manifest"); err != nil {
			return nil, err
		}
		if edited, err = yamljson.ToJSONWithin(edited, opts.inputLimit(), "edited StatefulSet "+displayName(file)); err != nil {
			return nil, withCode(ExitUsage, fmt.Errorf("edited StatefulSet: %w", err))
		}
	default:
		return nil, wrongInput(in, file, "a StatefulSet manifest (-f)")
	}
	return v.manifest(edited, file, "StatefulSet")
}

// snapshotWorld is the world of --from: the snapshot's, or that of the set the edited manifest names (its
// namespace, else -n) in a List, its pods' pace learned from them as a live preview learns it (but for the
// tick model, the reference harness's).
func snapshotWorld(cmd *cobra.Command, mods *commandModules, from, namespace string, edited []byte, v fieldValidation, model string) (*replay.Scenario, error) {
	opts := mods.opts
	doc, err := opts.readDocument(cmd.InOrStdin(), from, "snapshot")
	if err != nil {
		return nil, err
	}
	var md struct {
		Metadata struct{ Name, Namespace string } `json:"metadata"`
	}
	_ = json.Unmarshal(edited, &md)
	choice := setChoice{namespace: md.Metadata.Namespace, name: md.Metadata.Name}
	if namespace != "" {
		if choice.namespace != "" && choice.namespace != namespace {
			return nil, withCode(ExitUsage, fmt.Errorf("the edited StatefulSet's namespace %q does not match -n %q", choice.namespace, namespace))
		}
		choice.namespace = namespace
	}
	snap, err := snapshotInput(opts.recognise(doc, opts.inputLimit()), from, choice, v)
	if err != nil {
		return nil, err
	}
	// The snapshot is judged by the module first, exactly as `reconcile` judges it, so the same
	// bad snapshot exits the same way from both.
	if err := reconcileOnce(cmd.Context(), mods, snap); err != nil {
		return nil, err
	}
	base, err := replay.ScenarioFromSnapshot(snap.json)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	if model != replay.ModelTick {
		preview.LearnPaceFromSnapshot(&base.Kubelet, snap.json)
	}
	return base, nil
}

// settledWorld is the world of --scenario: the one the scenario's replay settles in.
func settledWorld(cmd *cobra.Command, mods *commandModules, scenario string, rollout *rolloutFlags, format string, v fieldValidation) (*replay.Scenario, error) {
	sc, err := loadReplayInput(cmd.Context(), mods, cmd.InOrStdin(), scenario, setChoice{}, v)
	if err != nil {
		return nil, err
	}
	tl, err := runReplay(cmd.Context(), mods, sc, rollout, newProgress(cmd.ErrOrStderr(), format, "replaying the scenario"))
	if err != nil {
		return nil, err
	}
	// A world cut off mid-way has pods the kubelet was still starting or stopping; a snapshot of it
	// keeps them as they were, so the preview would report them stuck.
	if tl.Outcome.Result == "limit" && strings.Contains(tl.StopReason, "(--replay-timeout ") {
		return nil, withCode(ExitLimit, fmt.Errorf("--scenario %s: %s, before the edit was previewed", scenario, tl.StopReason))
	}
	if tl.Outcome.Result == "limit" {
		return nil, withCode(ExitUsage, fmt.Errorf("--scenario %s stopped at its limit (%s) before it settled: a preview starts from the world a scenario settles in; raise the scenario's limits, or preview from a snapshot (--from)",
			scenario, tl.StopReason))
	}
	base, err := replay.Settled(sc, tl)
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	return base, nil
}

// previewEdit replays the edit on base with the module, the modules and policies the set names, and
// rollout's model and budget, drawing its progress on a terminal.
func previewEdit(cmd *cobra.Command, mods *commandModules, base *replay.Scenario, edited []byte, rollout *rolloutFlags, format string) (*replay.Preview, error) {
	ms, err := mods.all(cmd.Context())
	if err != nil {
		return nil, err
	}
	prog := newProgress(cmd.ErrOrStderr(), format, "previewing")
	p, err := replay.PreviewEdit(cmd.Context(), base, edited, replay.Options{Module: ms.module, NamedModule: ms.named, NamedPolicy: ms.pols.Get,
		Model: rollout.model, Budget: rollout.budget(), Progress: prog.update})
	prog.done()
	if err != nil {
		return nil, withCode(exitCodeOf(err), err)
	}
	return p, nil
}

// writePreview writes the preview in format to stdout and its picture to --html (renderWithPicture: a
// preview that cannot be written leaves neither).
func writePreview(cmd *cobra.Command, p *replay.Preview, format, htmlOut string) error {
	out, err := renderWithPicture(cmd.ErrOrStderr(), func(w io.Writer) error {
		if format == "text" {
			return p.WriteText(w)
		}
		return writeJSONAs(w, format, p.WriteJSON)
	}, "preview picture", htmlOut, p.WriteHTML)
	if err != nil {
		return err
	}
	_, err = cmd.OutOrStdout().Write(out)
	return err
}
