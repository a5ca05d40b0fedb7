package rollout

import "testing"

// A revision's letter is its number's: 1 = A ... 26 = Z, then the number; a revision keeps the letter it was
// first given (a rollback renumbers it); a second revision of one number is told apart.
func TestRevisionLetters(t *testing.T) {
	for n, want := range map[int64]string{1: "A", 2: "B", 26: "Z", 27: "r27", 0: "r0"} {
		if got := RevisionLetter(n); got != want {
			t.Errorf("RevisionLetter(%d) = %q, want %q", n, got, want)
		}
	}
	var l Letters
	if a, b := l.Of("web-a", 1), l.Of("web-b", 2); a != "A" || b != "B" {
		t.Errorf("letters %s %s, want A B", a, b)
	}
	if a := l.Of("web-a", 3); a != "A" { // rolled back to: renumbered 3, still A
		t.Errorf("renumbered web-a is %s, want A", a)
	}
	if again := l.Of("web-a2", 1); again != "A'" {
		t.Errorf("a second revision 1 is %s, want A'", again)
	}
	if l.Of("", 5) != UnknownRevision {
		t.Error("no name is not the unknown revision")
	}
	if got, want := RevisionLegend(l.Refs), "revisions: A=web-a (1) A'=web-a2 (1) B=web-b (2)"; got != want {
		t.Errorf("legend %q, want %q", got, want)
	}
	if got := RevisionLegend(nil); got != "revisions: none" {
		t.Errorf("empty legend %q", got)
	}
}
