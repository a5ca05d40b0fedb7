// Package didyoumean is the one "did you mean" of the host: the known name closest to one that is not
// known (a misspelt field of a snapshot, a scenario, a manifest or a test file), when one is close enough
// to be what was meant.
package didyoumean

import "strings"

// Closest returns the candidate that name most likely misspells, or "" when none is close: the same name
// in another case first, then the fewest edits (insertions, deletions, substitutions, and transpositions of
// two adjacent letters, case aside), at most about a third of the name's length (1 edit for names of up to
// 5 letters, 2 up to 8, 3 beyond). Ties go to the candidate listed first. A candidate equal to name is not
// a suggestion.
func Closest(name string, candidates []string) string {
	lname := strings.ToLower(name)
	limit := maxEdits(len([]rune(name)))
	best, bestD := "", limit+1
	for _, c := range candidates {
		if c == name || c == "" {
			continue
		}
		d := distance(lname, strings.ToLower(c), bestD)
		if d < bestD {
			best, bestD = c, d
		}
	}
	return best
}

// maxEdits is how many edits a name of n letters may be from the one meant: beyond it, a candidate is
// another name, not a misspelling (spec vs size).
func maxEdits(n int) int {
	switch {
	case n <= 5:
		return 1
	case n <= 8:
		return 2
	}
	return 3
}

// distance is the optimal string alignment distance of a and b (Levenshtein plus adjacent transpositions),
// or a value of at least bound once it cannot be less than bound.
func distance(a, b string, bound int) int {
	ra, rb := []rune(a), []rune(b)
	if d := len(ra) - len(rb); d >= bound || -d >= bound {
		return bound
	}
	// Three rows: the previous two and the current one.
	prev2 := make([]int, len(rb)+1)
	prev := make([]int, len(rb)+1)
	cur := make([]int, len(rb)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(ra); i++ {
		cur[0] = i
		rowMin := cur[0]
		for j := 1; j <= len(rb); j++ {
			cost := 1
			if ra[i-1] == rb[j-1] {
				cost = 0
			}
			v := min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
			if i > 1 && j > 1 && ra[i-1] == rb[j-2] && ra[i-2] == rb[j-1] {
				v = min(v, prev2[j-2]+1)
			}
			cur[j] = v
			rowMin = min(rowMin, v)
		}
		if rowMin >= bound {
			return bound
		}
		prev2, prev, cur = prev, cur, prev2
	}
	return prev[len(rb)]
}
