package yamljson

import (
	"bytes"
	"encoding/json"
	"errors"

	yamlv3 "go.yaml.in/yaml/v3"

	"github.com/ordinal-dev/ordinal/internal/readlimit"
)

// A YAML alias (*name) stands for the whole of what its anchor (&name) holds, so a few hundred bytes of
// anchors, each aliased ten times by the next, hold gigabytes once converted (the "billion laughs"). The
// YAML library refuses a document whose decoding is mostly alias expansion, but not one whose aliases
// name a few large values many times (a long string aliased a hundred thousand times passes, and takes
// minutes and gigabytes to convert). So a document's size with its aliases expanded counts against the
// same limit as its bytes: Limit(limit), the most YAML read for its input (all its documents and, for a
// document converted a piece at a time, all its pieces together).

// aliasBudget is how much the aliases of one input may expand it to, in all its documents and pieces.
type aliasBudget struct{ limit, left int64 }

func newAliasBudget(limit int64) *aliasBudget {
	return &aliasBudget{limit: Limit(limit), left: Limit(limit)}
}

// spend weighs b, a document or piece the YAML library is about to convert: one with aliases spends its
// size with them expanded, and is refused (*readlimit.TooLargeError) past what is left; one without spends
// nothing, its bytes having been read within the limit. A document that cannot be parsed is left to the
// conversion, which says what is wrong with it.
func (a *aliasBudget) spend(b []byte) error {
	if !mayHaveAliases(b) {
		return nil
	}
	var doc yamlv3.Node
	if yamlv3.Unmarshal(b, &doc) != nil {
		return nil
	}
	s := sizer{max: a.left, anchored: map[*yamlv3.Node]int64{}, open: map[*yamlv3.Node]bool{}}
	n := s.size(&doc)
	if n > a.left {
		return &readlimit.TooLargeError{What: "the document with its aliases expanded", Limit: a.limit, Format: "YAML",
			Note: "each alias (*name) repeats all its anchor (&name) holds"}
	}
	a.left -= n
	return nil
}

func isTooLarge(err error) bool {
	var tl *readlimit.TooLargeError
	return errors.As(err, &tl)
}

// mayHaveAliases is false for a document that has none for sure: valid JSON, or no anchor and alias
// characters at all.
func mayHaveAliases(b []byte) bool {
	return bytes.IndexByte(b, '&') >= 0 && bytes.IndexByte(b, '*') >= 0 && !json.Valid(b)
}

// sizer counts a document's size as JSON, about: its scalars' bytes and two for each value's quotes,
// brackets or separators, an alias counted as its anchor's value. Sizes stop growing past max.
type sizer struct {
	max      int64
	anchored map[*yamlv3.Node]int64 // the size of each anchored value, counted once
	open     map[*yamlv3.Node]bool  // anchored values being counted: an alias inside one is a cycle
}

func (s *sizer) size(n *yamlv3.Node) int64 {
	if n.Kind == yamlv3.AliasNode {
		if n.Alias == nil || s.open[n.Alias] {
			return 0 // a cycle, which the conversion refuses
		}
		return s.size(n.Alias)
	}
	if n.Anchor != "" {
		if v, ok := s.anchored[n]; ok {
			return v
		}
		s.open[n] = true
		defer delete(s.open, n)
	}
	total := int64(len(n.Value)) + 2
	for _, c := range n.Content {
		total = min(total+s.size(c)+2, s.max+1)
	}
	if n.Anchor != "" {
		s.anchored[n] = total
	}
	return total
}
