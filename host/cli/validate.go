package cli

import (
	"fmt"
	"io"

	"github.com/spf13/cobra"

	"github.com/ordinal-dev/ordinal/host/kube"
	"github.com/ordinal-dev/ordinal/internal/fieldcheck"
	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// Unknown fields in what the commands read (issue "A newcomer's first hour", item 4). In Ordinal's own
// formats (a snapshot's envelope, a scenario, a test file) an unknown field is always an error: a misspelt
// event or member would otherwise do nothing. In the Kubernetes objects of a snapshot, a List, a scenario
// or a manifest it is what kubectl's --validate makes it: kube-apiserver v1.37 would not store the field,
// and another version might know it.

// The values of --validate, kubectl's (with its aliases true and false).
const (
	validateStrict = "strict" // an unknown field is an error (exit 1)
	validateWarn   = "warn"   // an unknown field is named on stderr and dropped
	validateIgnore = "ignore" // an unknown field is dropped without a word
)

// validateFlag is --validate on a command that reads Kubernetes objects from files.
type validateFlag struct{ mode string }

func (f *validateFlag) bind(cmd *cobra.Command) {
	fl := cmd.Flags()
	fl.StringVar(&f.mode, "validate", validateWarn, "unknown fields: strict, warn or ignore")
	appendHelp(cmd, `--validate judges unknown fields in Kubernetes objects (of snapshots, Lists, scenarios, manifests):
strict (a bare --validate) refuses them (exit 1); warn names them on stderr and drops them, as kube-apiserver
does; ignore drops them. In Ordinal's own formats they are always errors.`)
	fl.Lookup("validate").NoOptDefVal = validateStrict // kubectl's bare --validate
}

// resolve checks the flag's value and returns the validation it asks for, warning on cmd's stderr.
func (f *validateFlag) resolve(cmd *cobra.Command) (fieldValidation, error) {
	mode := f.mode
	switch mode {
	case "true":
		mode = validateStrict
	case "false":
		mode = validateIgnore
	case validateStrict, validateWarn, validateIgnore:
	default:
		return fieldValidation{}, withCode(ExitUsage, fmt.Errorf(`--validate %q: must be one of strict (or true), warn, ignore (or false)`, f.mode))
	}
	return fieldValidation{mode: mode, stderr: cmd.ErrOrStderr()}, nil
}

// fieldValidation is what a command does with the unknown fields of the Kubernetes objects it reads. The zero
// value is ignore's.
type fieldValidation struct {
	mode   string
	stderr io.Writer
}

// report judges the unknown fields of the Kubernetes objects of file (by their paths in it): a usage error
// under strict, a warning each under warn (on stderr: never in the output a command writes), nothing under
// ignore.
func (v fieldValidation) report(file string, us []fieldcheck.Unknown) error {
	if len(us) == 0 {
		return nil
	}
	switch v.mode {
	case validateStrict:
		return withCode(ExitUsage, fmt.Errorf("%s: %w\n(--validate=warn or --validate=ignore drops unknown fields of Kubernetes objects instead)", displayName(file), &fieldcheck.Error{Unknown: us}))
	case validateWarn:
		if v.stderr != nil {
			for _, u := range us {
				fmt.Fprintln(v.stderr, termsafe.String(fmt.Sprintf("Warning: %s: %s", displayName(file), u)))
			}
		}
	}
	return nil
}

// manifest is the one check of a manifest read from a file (preview -f, a replayed manifest, a test's
// edit): its unknown fields reported, and the manifest returned without them. kind is the object's; a
// manifest that does not say (kubectl needs it to, a preview takes it for a StatefulSet) is checked as one.
func (v fieldValidation) manifest(js []byte, file, kind string) ([]byte, error) {
	us := kube.UnknownFields(kind, js)
	if err := v.report(file, us); err != nil {
		return nil, err
	}
	return fieldcheck.Drop(js, us), nil
}

// ownFormat is the error for unknown fields of one of Ordinal's own formats in file.
func ownFormat(file string, us []fieldcheck.Unknown) error {
	return withCode(ExitUsage, fmt.Errorf("%s: %w", displayName(file), &fieldcheck.Error{Unknown: us}))
}
