package cli

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/spf13/cobra"

	hostplan "github.com/ordinal-dev/ordinal/host/plan"
	"github.com/ordinal-dev/ordinal/host/replay"
	"github.com/ordinal-dev/ordinal/host/wasm"
	"github.com/ordinal-dev/ordinal/internal/readlimit"
	"github.com/ordinal-dev/ordinal/internal/yamljson"
)

func newReplayCommand(opts *moduleOptions) *cobra.Command {
	var golden, htmlOut, file string
	var rollout rolloutFlags
	var update, verbose bool
	var output outputFlag
	var choice setChoice
	var validate validateFlag
	cmd := &cobra.Command{
		Use:   "replay [-f] SCENARIO.yaml|SNAPSHOT|MANIFEST|LIST [statefulset/NAME] [-n NAMESPACE]",
		Short: "Replay a scenario in virtual time and print the rollout timeline",
		Long: `replay runs a scenario (initial manifests, a kubelet model and timed events; see
testdata/scenarios/README.md) against an in-memory API server, a simulated kubelet and the reconcile
module, in virtual time, and prints the timeline: per controller sync the time, what changed, a one-line
pod grid (ordinal:revision/state) and the writes. A replay that does not settle stops at the scenario's
limits (limits.steps, limits.duration); by default the larger of 2000 syncs and 6h of virtual time, or
10 syncs and 1 minute per replica of the set, so a rollout of any size replays to completion. Instead of a
scenario it takes a snapshot or a kubectl List (the world from there on, no events), or a StatefulSet
manifest (its creation). -n NAMESPACE and statefulset/NAME pick the set of a List that holds several (a
snapshot's set must be the one named; a manifest without a namespace gets -n's, as kubectl apply -n).
The input is the first argument or, as kubectl takes a file, -f FILE (- for standard input).

  --golden FILE   compare the output with FILE; exit 5 and show the first difference when it differs
  --update        with --golden, rewrite FILE instead
  -o json|yaml    machine-readable timeline (every step's full plan included)
  --html FILE     also write a self-contained page with the rollout as a picture (pods x time)
  --model tick    replay with the reference harness's kubelet model (oracle simulate) instead`,
		Args: func(cmd *cobra.Command, args []string) error { return replayArgs(cmd, args) },
		RunE: func(cmd *cobra.Command, args []string) error {
			if !cmd.Flags().Changed("filename") {
				file, args = args[0], args[1:]
			}
			if err := choice.setArg(args); err != nil {
				return err
			}
			if update && golden == "" {
				return withCode(ExitUsage, fmt.Errorf("--update needs --golden FILE"))
			}
			format, err := output.resolve(cmd)
			if err != nil {
				return err
			}
			fail, err := rollout.parse(false)
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
			mods := opts.commandModules()
			defer mods.close()
			sc, err := loadReplayInput(cmd.Context(), mods, cmd.InOrStdin(), file, choice, v)
			if err != nil {
				return err
			}
			tl, err := runReplay(cmd.Context(), mods, sc, &rollout, newProgress(cmd.ErrOrStderr(), format, "replaying"))
			if err != nil {
				return err
			}
			mods.close()
			if format == "json" && golden == "" {
				// streamed: a large replay's JSON (over 100 MB at 1000 pods) is never held whole
				if err := writeHTML(cmd.ErrOrStderr(), "replay picture", htmlOut, tl.WriteHTML); err != nil {
					return err
				}
				if err := writeJSONAs(cmd.OutOrStdout(), format, tl.WriteJSON); err != nil {
					return err
				}
				return fail.verdict(tl.Outcome, replayWarnings(tl))
			}
			out, err := renderWithPicture(cmd.ErrOrStderr(), func(w io.Writer) error {
				if format == "text" {
					return tl.WriteText(w, verbose)
				}
				return writeJSONAs(w, format, tl.WriteJSON)
			}, "replay picture", htmlOut, tl.WriteHTML)
			if err != nil {
				return err
			}
			if golden != "" {
				return checkGolden(cmd.OutOrStdout(), golden, out, update)
			}
			if _, err := cmd.OutOrStdout().Write(out); err != nil {
				return err
			}
			return fail.verdict(tl.Outcome, replayWarnings(tl))
		},
	}
	f := cmd.Flags()
	f.StringVarP(&file, "filename", "f", "", "the input (instead of the argument), or - for standard input")
	choice.bindNamespace(cmd)
	f.StringVar(&golden, "golden", "", "compare with this golden file (exit 5 on difference)")
	f.BoolVar(&update, "update", false, "rewrite the golden file")
	addOutputFlag(cmd, &output, "text, json or yaml")
	f.StringVar(&htmlOut, "html", "", "write an HTML picture of the rollout to this file")
	rollout.bind(cmd, `kubelet model: "delays" or "tick" (default: the scenario's)`, false)
	f.BoolVarP(&verbose, "verbose", "v", false, "also print idle syncs and the controller's events")
	validate.bind(cmd)
	return cmd
}

// replayArgs checks replay's arguments: the input and an optional set, or only the set when -f gives the
// input (kubectl's habit, as reconcile and preview take theirs), never both.
func replayArgs(cmd *cobra.Command, args []string) error {
	usage := "; usage: " + cmd.UseLine()
	if !cmd.Flags().Changed("filename") {
		if len(args) == 0 {
			return withCode(ExitUsage, errors.New("no input: give a scenario, snapshot, List or manifest as the argument or with -f"+usage))
		}
		if len(args) > 2 {
			return withCode(ExitUsage, fmt.Errorf("%d arguments: want the input and at most one statefulset/NAME%s", len(args), usage))
		}
		return nil
	}
	if len(args) > 1 {
		return withCode(ExitUsage, fmt.Errorf("%d arguments with -f: want at most one statefulset/NAME%s", len(args), usage))
	}
	if len(args) == 1 {
		if _, _, err := parseSetArg(args[0]); err != nil && isRegularFile(args[0]) {
			return withCode(ExitUsage, fmt.Errorf("-f and %s: replay takes one input, as the argument or with -f%s", args[0], usage))
		}
	}
	return nil
}

// runReplay loads the module and replays sc with rollout's model and --replay-timeout, drawing prog (a
// progress line on a terminal). The caller has checked rollout (parse).
func runReplay(ctx context.Context, mods *commandModules, sc *replay.Scenario, rollout *rolloutFlags, prog *progress) (*replay.Timeline, error) {
	ms, err := mods.all(ctx)
	if err != nil {
		return nil, err
	}
	var loaded []*wasm.Module
	defer func() {
		for _, l := range loaded {
			l.Close(ctx)
		}
	}()
	ro := replay.Options{
		Module:      ms.module,
		Model:       rollout.model,
		Budget:      rollout.budget(),
		NamedModule: ms.named,
		NamedPolicy: ms.pols.Get,
		LoadModule: func(ctx context.Context, path string) (hostplan.Reconciler, error) {
			o := *mods.opts
			o.path = path
			lm, err := o.load(ctx)
			if err != nil {
				return nil, err
			}
			loaded = append(loaded, lm)
			return lm, nil
		},
	}
	ro.Progress = prog.update
	tl, err := replay.Run(ctx, sc, ro)
	prog.done()
	if err != nil {
		return nil, withCode(exitCodeOf(err), err)
	}
	return tl, nil
}

// loadReplayInput reads replay's argument (a file, or - for standard input): a scenario, or a snapshot,
// List or manifest as one. A snapshot is judged by the module first, as `reconcile` and `preview --from`
// judge it, so the same snapshot exits the same way from all three (a replicas of 1e400 is the module's
// InvalidSnapshot, exit 2, not the in-memory API server's refusal, exit 1). The unknown fields of the
// Kubernetes objects in it are v's to judge.
func loadReplayInput(ctx context.Context, mods *commandModules, stdin io.Reader, path string, choice setChoice, v fieldValidation) (*replay.Scenario, error) {
	var b []byte
	var err error
	if path == "-" {
		b, err = yamljson.Read(stdin, replay.MaxScenarioBytes, "scenario on standard input", "")
	} else {
		b, err = yamljson.ReadFile(path, replay.MaxScenarioBytes, "scenario "+path, "")
	}
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	in := mods.opts.recognise(b, replay.MaxScenarioBytes)
	sc, snap, err := scenarioInput(in, path, choice, v)
	if snap != nil {
		if err := reconcileOnce(ctx, mods, *snap); err != nil {
			return nil, err
		}
	}
	if err != nil || sc != nil {
		return sc, err
	}
	if path == "-" {
		if sc, err = replay.ParseScenario(b); err != nil {
			err = fmt.Errorf("scenario on standard input: %w", err)
		}
	} else {
		sc, err = replay.LoadScenario(path)
	}
	if err != nil {
		return nil, withCode(ExitUsage, err)
	}
	if err := v.report(path, sc.UnknownFields); err != nil {
		return nil, err
	}
	return sc, nil
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}

// checkModel refuses a kubelet model that does not exist (a usage error).
func checkModel(model string) error {
	switch model {
	case "", replay.ModelDelays, replay.ModelTick:
		return nil
	}
	return withCode(ExitUsage, fmt.Errorf("--model %q: not %q or %q", model, replay.ModelDelays, replay.ModelTick))
}

func checkGolden(stdout io.Writer, path string, got []byte, update bool) error {
	if update {
		if err := os.WriteFile(path, got, 0o644); err != nil {
			return withCode(ExitUsage, err)
		}
		fmt.Fprintf(stdout, "updated %s\n", path)
		return nil
	}
	want, err := readlimit.File(path, replay.MaxScenarioBytes, "golden timeline "+path, "")
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("reading golden: %w", err))
	}
	if bytes.Equal(want, got) {
		fmt.Fprintf(stdout, "matches %s\n", path)
		return nil
	}
	return withCode(ExitGoldenDiffers, fmt.Errorf("timeline differs from %s:\n%s", path, firstDifference(string(want), string(got))))
}

// firstDifference shows the first differing line with a little context.
func firstDifference(want, got string) string {
	wl, gl := strings.Split(want, "\n"), strings.Split(got, "\n")
	for i := 0; i < len(wl) || i < len(gl); i++ {
		var w, g string
		if i < len(wl) {
			w = wl[i]
		}
		if i < len(gl) {
			g = gl[i]
		}
		if w != g || i >= len(wl) || i >= len(gl) {
			return fmt.Sprintf("line %d:\n  golden: %s\n  got:    %s", i+1, w, g)
		}
	}
	return "(no line differs; trailing bytes differ)"
}

// renderWithPicture renders a command's output, then writes its picture (what, to --html path; none when
// picture is nil), and returns the output for the caller to print: output that cannot be rendered, or a
// picture that cannot be written, leaves nothing printed.
func renderWithPicture(stderr io.Writer, render func(io.Writer) error, what, path string, picture func(io.Writer) error) ([]byte, error) {
	var out bytes.Buffer
	if err := render(&out); err != nil {
		return nil, withCode(ExitUsage, err)
	}
	if picture != nil {
		if err := writeHTML(stderr, what, path, picture); err != nil {
			return nil, err
		}
	}
	return out.Bytes(), nil
}

// checkHTMLPath refuses --html FILE in a directory that does not exist before anything is replayed: the
// page is written last, after a replay that may take seconds, and the error then named FILE.tmp.
func checkHTMLPath(path string) error {
	if path == "" {
		return nil
	}
	if fi, err := os.Stat(filepath.Dir(path)); err != nil || !fi.IsDir() {
		return withCode(ExitUsage, fmt.Errorf("--html %s: no directory %s to write the page in", path, filepath.Dir(path)))
	}
	return nil
}

// writeHTML writes the picture of a replay (--html; nothing when path is empty): replay, preview and
// kubectl ordinal preview all draw it with Timeline.WriteHTML. It says on stderr where the page went, so a
// user who asked for it need not look for it, and stdout stays the timeline (-o json|yaml is piped).
func writeHTML(stderr io.Writer, what, path string, write func(io.Writer) error) error {
	if path == "" {
		return nil
	}
	n, err := writeFileAtomic(path, write)
	if err != nil {
		return withCode(ExitUsage, fmt.Errorf("--html %s: %w", path, err))
	}
	fmt.Fprintf(stderr, "wrote %s to %s (%s)\n", what, path, fileSize(n))
	return nil
}

// fileSize is a written file's size for a person: bytes, KB or MB (powers of 1024, rounded up, so a small
// page never reads "0 KB").
func fileSize(n int) string {
	switch {
	case n < 1<<10:
		return fmt.Sprintf("%d bytes", n)
	case n < 10<<20:
		return fmt.Sprintf("%d KB", (n+1<<10-1)>>10)
	}
	return fmt.Sprintf("%d MB", (n+1<<20-1)>>20)
}

// writeFileAtomic writes path through a temporary file beside it and returns the bytes written.
func writeFileAtomic(path string, write func(io.Writer) error) (int, error) {
	var b bytes.Buffer
	if err := write(&b); err != nil {
		return 0, err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return 0, err
	}
	return b.Len(), os.Rename(tmp, path)
}
