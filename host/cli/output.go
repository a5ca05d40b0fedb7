package cli

import (
	"bytes"
	"fmt"
	"io"

	"github.com/spf13/cobra"
	"sigs.k8s.io/yaml"

	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// outputFlag is kubectl's -o/--output: text (the default, for people), json or yaml. The --json flag of
// earlier releases still works, deprecated.
type outputFlag struct {
	format string
	json   bool
}

func addOutputFlag(cmd *cobra.Command, o *outputFlag, what string) {
	cmd.Flags().StringVarP(&o.format, "output", "o", "text", "output format: "+what)
	cmd.Flags().BoolVar(&o.json, "json", false, "same as -o json")
	_ = cmd.Flags().MarkHidden("json")
}

// resolve returns the format, or a usage error; the old --json gets a note on stderr.
func (o *outputFlag) resolve(cmd *cobra.Command) (string, error) {
	if o.json {
		fmt.Fprintln(cmd.ErrOrStderr(), "ordinal: --json is deprecated, use -o json")
		return "json", nil
	}
	return outputFormat(o.format)
}

// outputFormat checks an -o value ("" is text).
func outputFormat(s string) (string, error) {
	switch s {
	case "", "text":
		return "text", nil
	case "json", "yaml":
		return s, nil
	}
	return "", withCode(ExitUsage, fmt.Errorf("-o/--output must be text, json or yaml, not %q", s))
}

// writeJSONAs writes what writeJSON produces, as JSON or converted to YAML, with termsafe.JSON's escapes:
// a module's, a policy's or the cluster's strings inside are the same values, and safe on a terminal.
func writeJSONAs(w io.Writer, format string, writeJSON func(io.Writer) error) error {
	if format != "yaml" {
		// as writeJSON writes it: a timeline's JSON can be over 100 MB
		j := termsafe.NewJSONWriter(w)
		if err := writeJSON(j); err != nil {
			return err
		}
		return j.Close()
	}
	var b bytes.Buffer
	if err := writeJSON(&b); err != nil {
		return err
	}
	// JSONToYAML reads the JSON with a YAML parser, which refuses DEL, C1 controls, noncharacters and
	// invalid UTF-8 that JSON strings may hold (issue 32, finding 9: -o yaml exited 4 on plans -o json
	// prints); termsafe.JSON writes them as the \u escapes that mean the same, as -o json prints them.
	y, err := yaml.JSONToYAML(termsafe.JSON(b.Bytes()))
	if err != nil {
		return err
	}
	_, err = w.Write(y)
	return err
}
