package deadline

import "testing"

func TestSeconds(t *testing.T) {
	for v, want := range map[string]int64{"1": 1, "600": 600, "1073741824": MaxSeconds, "1073741825": 0, "0": 0, "-5": 0,
		"+5": 5, "5s": 0, " 5": 0, "": 0, "1e3": 0, "9223372036854775808": 0} {
		if n, ok := Seconds(v); n != want || ok != (want > 0) {
			t.Errorf("Seconds(%q) = %d, %v; want %d", v, n, ok, want)
		}
	}
}
