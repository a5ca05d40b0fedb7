package didyoumean

import "testing"

func TestClosest(t *testing.T) {
	set := []string{"replicas", "selector", "template", "serviceName", "podManagementPolicy", "updateStrategy",
		"revisionHistoryLimit", "minReadySeconds", "ordinals", "volumeClaimTemplates", "persistentVolumeClaimRetentionPolicy"}
	for _, c := range []struct {
		name string
		in   []string
		want string
	}{
		{"podManagmentPolicy", set, "podManagementPolicy"}, // a letter left out
		{"replcas", set, "replicas"},
		{"replicsa", set, "replicas"},                       // two letters swapped: one edit
		{"PodManagementPolicy", set, "podManagementPolicy"}, // another case
		{"servicename", set, "serviceName"},
		{"updateStrategyy", set, "updateStrategy"},
		{"statefullSet", []string{"abi", "now", "statefulSet", "pods", "revisions", "claims"}, "statefulSet"},
		{"evnets", []string{"name", "manifests", "events", "kubelet"}, "events"},
		{"foo", set, ""},               // nothing close
		{"spec", []string{"size"}, ""}, // two edits in four letters: another name
		{"replicas", set, ""},          // known: nothing to suggest
		{"x", nil, ""},
		{"", set, ""},
		{"ab", []string{"ac", "ab2"}, "ac"}, // ties: the first listed
		{"názov", []string{"nazov"}, "nazov"},
	} {
		if got := Closest(c.name, c.in); got != c.want {
			t.Errorf("Closest(%q) = %q, want %q", c.name, got, c.want)
		}
	}
}

func TestDistance(t *testing.T) {
	for _, c := range []struct {
		a, b string
		want int
	}{
		{"", "", 0}, {"a", "", 1}, {"abc", "abc", 0}, {"abc", "acb", 1}, {"kitten", "sitting", 3}, {"ca", "abc", 3},
	} {
		if got := distance(c.a, c.b, 100); got != c.want {
			t.Errorf("distance(%q, %q) = %d, want %d", c.a, c.b, got, c.want)
		}
	}
	if got := distance("abcdef", "uvwxyz", 2); got != 2 {
		t.Errorf("bounded distance = %d, want the bound 2", got)
	}
}
