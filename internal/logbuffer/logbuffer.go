// Package logbuffer is a log destination for tests: goroutines of the code under test write it while the test
// reads it, and a test waits for the line it expects instead of sleeping.
package logbuffer

import (
	"strings"
	"sync"
	"testing"
	"time"
)

// Buffer is a log that is safe to write and read at once.
type Buffer struct {
	mu  sync.Mutex
	buf strings.Builder
}

func (b *Buffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

// String is everything written so far.
func (b *Buffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// WaitFor waits until a line holds every part. The minute is a hang guard, not a budget: the test fails only
// when the line never comes.
func (b *Buffer) WaitFor(t testing.TB, parts ...string) {
	t.Helper()
	for deadline := time.Now().Add(time.Minute); !b.hasLine(parts); time.Sleep(time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf("no log line with %q in:\n%s", parts, b.String())
		}
	}
}

func (b *Buffer) hasLine(parts []string) bool {
	for line := range strings.SplitSeq(b.String(), "\n") {
		found := true
		for _, p := range parts {
			found = found && strings.Contains(line, p)
		}
		if found {
			return true
		}
	}
	return false
}
