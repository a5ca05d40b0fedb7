package cli

import (
	"os"
	"runtime/debug"
	"testing"
)

// withoutGCEnv runs a test with neither GOGC nor GOMEMLIMIT in the environment (the hold's case).
func withoutGCEnv(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Setenv(env, "") // restored after the test
		os.Unsetenv(env)
	}
}

// gcSetting is the collector's GOGC percent and memory limit, read without changing them.
func gcSetting() (percent int, limit int64) {
	percent = debug.SetGCPercent(-1)
	debug.SetGCPercent(percent)
	return percent, debug.SetMemoryLimit(-1)
}

// A hold turns the collector off within a memory limit that grows with the input, and its release puts
// back the setting it found.
func TestHoldCollectorTurnsTheCollectorOffWithinALimit(t *testing.T) {
	withoutGCEnv(t)
	wantPercent, wantLimit := gcSetting()
	h := holdCollector()
	percent, base := gcSetting()
	if percent != -1 {
		t.Errorf("GOGC during the hold is %d, want -1 (off)", percent)
	}
	if base < lateGCFloor || base == wantLimit {
		t.Errorf("memory limit during the hold is %d, want the runtime's memory plus %d", base, lateGCFloor)
	}
	h.input(1 << 20)
	if _, limit := gcSetting(); limit != base+lateGCPerInput<<20 {
		t.Errorf("memory limit after a 1 MiB input is %d, want %d", limit, base+lateGCPerInput<<20)
	}
	h.release()
	h.release() // a second release changes nothing
	if percent, limit := gcSetting(); percent != wantPercent || limit != wantLimit {
		t.Errorf("after the hold: GOGC %d and limit %d, want %d and %d", percent, limit, wantPercent, wantLimit)
	}
}

// Holds that overlap (commands run in one process) keep the collector off until the last one ends.
func TestOverlappingHoldsEndWithTheLast(t *testing.T) {
	withoutGCEnv(t)
	wantPercent, wantLimit := gcSetting()
	first, second := holdCollector(), holdCollector()
	second.input(1 << 20)
	first.release()
	if percent, _ := gcSetting(); percent != -1 {
		t.Fatalf("GOGC %d after the first of two holds ended, want -1 (off)", percent)
	}
	second.release()
	if percent, limit := gcSetting(); percent != wantPercent || limit != wantLimit {
		t.Errorf("after both holds: GOGC %d and limit %d, want %d and %d", percent, limit, wantPercent, wantLimit)
	}
}

// GOGC or GOMEMLIMIT in the environment is the user's setting: a hold leaves it alone.
func TestHoldCollectorLeavesTheUsersSetting(t *testing.T) {
	for _, env := range []string{"GOGC", "GOMEMLIMIT"} {
		t.Run(env, func(t *testing.T) {
			t.Setenv(env, "200")
			wantPercent, wantLimit := gcSetting()
			h := holdCollector()
			h.input(1 << 20)
			if percent, limit := gcSetting(); percent != wantPercent || limit != wantLimit {
				t.Errorf("with %s set, the hold changed GOGC to %d and the limit to %d", env, percent, limit)
			}
			h.release()
		})
	}
}
