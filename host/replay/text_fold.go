package replay

import (
	"fmt"
	"strconv"
	"strings"
)

// Text output does not grow with the set's size (issue 31): a rollout repeats the same few syncs once per pod
// (delete web-299, create web-299, delete web-298, ...), so the text writers print a repeated run once at
// its start and once at its end, with one line for what they left out; -v and -o json|yaml keep every
// step.

// textWidth is the longest line the text writers make of lists (names, batches, a sync's writes) before
// they wrap, like a terminal's.
const textWidth = 100

// shape is an item of text with its counts taken out: two items repeat when their shapes are equal and
// their counts move by the same amounts from one repetition to the next.
type shape struct {
	text string  // the text, each count replaced by '#'
	nums []int64 // the counts, in order
	name []bool  // whether each count ends a name ("web-12"): the ordinals a fold line speaks of
}

// shapeOf takes out of s the runs of digits that are counts: a number written as strconv writes it (no
// leading zero) that is not part of a decimal ("0.05") or too long for an int64. Any other digits stay
// text, so that "007" and "7", "0.5" and "0.05" never pass for one another.
func shapeOf(s string) shape {
	var b strings.Builder
	var sh shape
	digit := func(i int) bool { return i >= 0 && i < len(s) && s[i] >= '0' && s[i] <= '9' }
	for i := 0; i < len(s); {
		if !digit(i) {
			b.WriteByte(s[i])
			i++
			continue
		}
		j := i
		for digit(j) {
			j++
		}
		n, err := strconv.ParseInt(s[i:j], 10, 64)
		decimal := i > 0 && s[i-1] == '.' && digit(i-2) || j < len(s) && s[j] == '.' && digit(j+1)
		if err != nil || decimal || (s[i] == '0' && j-i > 1) {
			b.WriteString(s[i:j])
		} else {
			b.WriteByte('#')
			sh.nums = append(sh.nums, n)
			sh.name = append(sh.name, i > 0 && s[i-1] == '-' && (j == len(s) || !alnum(s[j]))) // web-12, not web-6cbd9df98d
		}
		i = j
	}
	sh.text = b.String()
	return sh
}

func alnum(c byte) bool { return c >= '0' && c <= '9' || c >= 'a' && c <= 'z' || c >= 'A' && c <= 'Z' }

// run is items [start, start+period*reps) of a list: reps repetitions of period items (reps 1: as they
// are). step is how much the ordinals of the names in a repetition move to the next, when they all move
// alike (0: they do not, or there are none).
type run struct {
	start, period, reps int
	step                int64
}

// maxPeriod is the longest repeated group looked for: a rollout's pod takes a few syncs (deleted, created,
// Running, Ready) and a replay a few more, and a batch of maxUnavailable pods about three a pod (a batch of
// 20 under OrderedReady is 62 syncs). A longer group is folded inside (eachFolded) but not as a whole.
const maxPeriod = 1000

// foldRuns splits items into runs: the longest repetition starting at each item that covers at least
// minItems items in at least minReps repetitions, else the item alone. A repetition is the same shapes with
// each number moving by the same amount as between the first two repetitions (the ordinal down by one,
// the updated count up by one), so what is left out follows from what is shown.
func foldRuns(items []shape, minReps, minItems int) []run {
	var out []run
	for i := 0; i < len(items); {
		best := run{start: i, period: 1, reps: 1}
		for k := 1; k <= maxPeriod && i+max(2, minReps)*k <= len(items); k++ { // fewer than minReps repetitions never fold
			reps, ok := 1, true
			var delta [][]int64
			for ok && i+(reps+1)*k <= len(items) {
				for j := 0; j < k && ok; j++ {
					a, b := items[i+(reps-1)*k+j], items[i+reps*k+j]
					if a.text != b.text || len(a.nums) != len(b.nums) {
						ok = false
						break
					}
					if reps == 1 {
						d := make([]int64, len(a.nums))
						for x := range d {
							d[x] = b.nums[x] - a.nums[x]
						}
						delta = append(delta, d)
						continue
					}
					for x := range a.nums {
						if b.nums[x]-a.nums[x] != delta[j][x] {
							ok = false
							break
						}
					}
				}
				if ok {
					reps++
				}
			}
			if reps >= minReps && reps*k >= minItems && reps*k > best.reps*best.period {
				best = run{start: i, period: k, reps: reps, step: ordinalStep(items[i:i+k], delta)}
			}
		}
		out = append(out, best)
		i += best.period * best.reps
	}
	return out
}

// ordinalStep is how much every ordinal of the names in a repetition (period) moves to the next when they
// all move by the same nonzero amount, else 0 (a fold line then names no direction rather than a wrong one).
func ordinalStep(period []shape, delta [][]int64) int64 {
	var step int64
	for j, item := range period {
		for x, isName := range item.name {
			if !isName || j >= len(delta) {
				continue
			}
			d := delta[j][x]
			if d == 0 || step != 0 && d != step {
				return 0
			}
			step = d
		}
	}
	return step
}

// left says what a folded run leaves out: "298 more times the same, one ordinal lower each time".
func (r run) left(unit string) string {
	s := fmt.Sprintf("%d more", r.reps-2)
	if unit != "" {
		s += " " + unit + " the same"
	}
	switch {
	case r.step == -1:
		s += ", one ordinal lower each time"
	case r.step == 1:
		s += ", one ordinal higher each time"
	case r.step < 0:
		s += fmt.Sprintf(", %d ordinals lower each time", -r.step)
	case r.step > 0:
		s += fmt.Sprintf(", %d ordinals higher each time", r.step)
	}
	return s
}

// foldList folds a list of items written one after another (a sync's writes, the batches): runs of at
// least six repetitions show their first and last with what is between said in one item (shorter ones
// are no longer written whole).
func foldList(items []string) []string {
	shapes := make([]shape, len(items))
	for i, s := range items {
		shapes[i] = shapeOf(s)
	}
	var out []string
	eachFolded(shapes, 6, 6, func(i int) { out = append(out, items[i]) },
		func(r run, _, _ int) { out = append(out, "... "+r.left("")+" ...") })
	return out
}

// eachFolded folds items (foldRuns) and writes them: item for each item shown (an item alone, a repetition's
// first and last period) and fold for what a repetition leaves out between them, items first to last. A
// repetition's first and last period are folded the same way in turn, so a repeated group that has its own
// repeats inside (a batch of maxUnavailable pods, each created, Running and Ready in turn) is as short as
// its parts: folding only the batches printed two batches whole, folding only the pods printed every batch.
func eachFolded(items []shape, minReps, minItems int, item func(i int), fold func(r run, first, last int)) {
	var walk func(lo, hi int)
	walk = func(lo, hi int) {
		for _, r := range foldRuns(items[lo:hi], minReps, minItems) {
			r.start += lo
			if r.reps == 1 {
				item(r.start)
				continue
			}
			last := r.start + (r.reps-1)*r.period
			walk(r.start, r.start+r.period)
			fold(r, r.start+r.period, last-1)
			walk(last, last+r.period)
		}
	}
	walk(0, len(items))
}

// wrapJoin joins parts with sep into lines of at most textWidth (a part longer than that has a line of its
// own), the lines after the first indented by indent spaces.
func wrapJoin(parts []string, sep string, first, indent int) string {
	var b strings.Builder
	col := first
	for i, p := range parts {
		if i > 0 {
			if col+len(sep)+len(p) > textWidth {
				b.WriteString(strings.TrimRight(sep, " "))
				b.WriteString("\n" + strings.Repeat(" ", indent))
				col = indent
			} else {
				b.WriteString(sep)
				col += len(sep)
			}
		}
		b.WriteString(p)
		col += len(p)
	}
	return b.String()
}
