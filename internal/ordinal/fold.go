package ordinal

// Fold writes a list of names for people: members of one parent at consecutive ordinals (going up or
// down) become one run, "web-0..web-499", so a list of a 1000-pod set stays a line; other names stay as
// they are, in the order given.
func Fold(names []string) []string {
	var out []string
	for i := 0; i < len(names); {
		p, o := Parse(names[i])
		j := i + 1
		if o >= 0 {
			step := int64(0)
			for j < len(names) {
				q, n := Parse(names[j])
				if q != p || n < 0 || (step == 0 && n != o+1 && n != o-1) || (step != 0 && n != o+step*int64(j-i)) {
					break
				}
				if step == 0 {
					step = n - o
				}
				j++
			}
		}
		if j-i > 2 {
			out = append(out, names[i]+".."+names[j-1])
		} else {
			out = append(out, names[i:j]...)
		}
		i = j
	}
	return out
}

// Runs splits items (in ordinal order) into runs of consecutive ordinals whose items are alike: the [start,
// end) of each, so a pod grid or a status table prints "0..297" once for 298 pods in one state.
func Runs[T any](items []T, ordinalOf func(T) int64, alike func(a, b T) bool) [][2]int {
	var out [][2]int
	for i := 0; i < len(items); {
		j := i + 1
		for j < len(items) && ordinalOf(items[j]) == ordinalOf(items[j-1])+1 && alike(items[i], items[j]) {
			j++
		}
		out = append(out, [2]int{i, j})
		i = j
	}
	return out
}
