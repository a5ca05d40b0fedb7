package webhook

import (
	"fmt"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ordinal-dev/ordinal/internal/termsafe"
)

// Warning limits. The API server (k8s.io/apiserver/pkg/endpoints/filters/warning.go) keeps the warnings of
// one request within 4096 runes in total, shared with every other webhook and its own deprecation warnings;
// past that it truncates each warning to 256 runes and drops the rest. A warning with a control character
// (a newline) is dropped (net.NewWarningHeader). So each warning here is one line of at most 256 runes,
// there are at most 8, and together they use at most half the budget.
const (
	WarningPrefix        = "ordinal: "
	MaxWarnings          = 8
	MaxWarningRunes      = 256
	MaxTotalWarningRunes = 2048
)

// limitWarnings prefixes, sanitises and bounds the warnings of one response.
func limitWarnings(lines []string) []string {
	out := []string{}
	total := 0
	for i, l := range lines {
		l = WarningPrefix + termsafe.String(sanitize(l)) // also the bidi overrides a terminal would obey
		l = truncateRunes(l, MaxWarningRunes)
		n := utf8.RuneCountInString(l)
		left := len(lines) - i - 1
		if len(out) == MaxWarnings-1 && left > 0 || total+n > MaxTotalWarningRunes {
			out = append(out, fmt.Sprintf("%s%d more warnings: see the full preview (GET /preview on the webhook, or kubectl ordinal preview)", WarningPrefix, len(lines)-i))
			return out
		}
		out = append(out, l)
		total += n
	}
	return out
}

// sanitize replaces control characters (newlines, tabs) with spaces: the API server drops a warning with one.
func sanitize(s string) string {
	if !utf8.ValidString(s) {
		s = strings.ToValidUTF8(s, "?")
	}
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, s)
}

func truncateRunes(s string, max int) string {
	if utf8.RuneCountInString(s) <= max {
		return s
	}
	r := []rune(s)
	return string(r[:max-1]) + "…"
}
