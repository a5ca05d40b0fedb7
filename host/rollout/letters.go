package rollout

import (
	"cmp"
	"fmt"
	"slices"
	"strings"
)

// RevisionLetter is the short name every output gives a set's ControllerRevision, from its number
// (.revision, as `kubectl rollout history` numbers it): 1 = A, 2 = B, ... 26 = Z, then r27, r28, ...
// So a revision is called the same in a replay, a preview, `kubectl ordinal status` and `history`.
func RevisionLetter(number int64) string {
	if number >= 1 && number <= 26 {
		return string(rune('A' + number - 1))
	}
	return fmt.Sprintf("r%d", number)
}

// UnknownRevision is the letter of a revision the set has no ControllerRevision for (a pod's
// controller-revision-hash that names none).
const UnknownRevision = "?"

// RevisionRef is a revision as the outputs name it: its letter, its name and its number.
type RevisionRef struct {
	Label  string `json:"label"`
	Name   string `json:"name"`
	Number int64  `json:"revision"`
}

// Letters hands out the letters of one output, each revision's once: the letter of the number it has when
// the output first names it, so a rollback, which renumbers the revision it returns to, keeps its letter to
// the end of a replay. A letter another revision already holds (two revisions of one number: a set deleted
// and made again) gets a ' for each earlier holder.
type Letters struct {
	byName map[string]string
	taken  map[string]bool
	// Refs are the revisions lettered, in the order they were.
	Refs []RevisionRef
}

// Of is the letter of the revision name with this number; its letter from before if it has one.
func (l *Letters) Of(name string, number int64) string {
	if name == "" {
		return UnknownRevision
	}
	if letter, ok := l.byName[name]; ok {
		return letter
	}
	if l.byName == nil {
		l.byName, l.taken = map[string]string{}, map[string]bool{}
	}
	letter := RevisionLetter(number)
	for l.taken[letter] {
		letter += "'"
	}
	l.byName[name], l.taken[letter] = letter, true
	l.Refs = append(l.Refs, RevisionRef{Label: letter, Name: name, Number: number})
	return letter
}

// Known is the letter the revision has been given, if any.
func (l *Letters) Known(name string) (string, bool) {
	letter, ok := l.byName[name]
	return letter, ok
}

// RevisionLegend is the line that says once what an output's letters mean:
// "revisions: A=web-6cbd9df98d (1) B=web-54cb854cf9 (2)", or "revisions: none".
func RevisionLegend(refs []RevisionRef) string { return strings.Join(RevisionLegendItems(refs), " ") }

// RevisionLegendItems are the legend's words, "revisions:" then one a revision, oldest number first, for an
// output that wraps it.
func RevisionLegendItems(refs []RevisionRef) []string {
	if len(refs) == 0 {
		return []string{"revisions:", "none"}
	}
	refs = slices.Clone(refs)
	slices.SortStableFunc(refs, func(a, b RevisionRef) int { return cmp.Compare(a.Number, b.Number) })
	items := []string{"revisions:"}
	for _, r := range refs {
		items = append(items, fmt.Sprintf("%s=%s (%d)", r.Label, r.Name, r.Number))
	}
	return items
}
