package readlimit

import (
	"bytes"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// endless is a reader that never ends; reading it must stop just past the limit.
type endless struct{ read int64 }

func (e *endless) Read(p []byte) (int, error) {
	e.read += int64(len(p))
	return len(p), nil
}

func TestReadStopsPastTheLimit(t *testing.T) {
	r := &endless{}
	_, err := Read(r, 1<<20, "snapshot", "--memory-limit-mib")
	var tl *TooLargeError
	if !errors.As(err, &tl) || tl.Limit != 1<<20 || err.Error() != "snapshot is larger than the 1 MiB limit (raise it with --memory-limit-mib)" {
		t.Fatalf("got %v", err)
	}
	if r.read > 2<<20 {
		t.Fatalf("read %d bytes of an endless input for a 1 MiB limit", r.read)
	}
	b, err := Read(strings.NewReader("abc"), 3, "x", "")
	if err != nil || string(b) != "abc" {
		t.Fatalf("an input of exactly the limit: %q %v", b, err)
	}
}

func TestFile(t *testing.T) {
	p := filepath.Join(t.TempDir(), "f")
	if err := os.WriteFile(p, make([]byte, 100), 0o600); err != nil {
		t.Fatal(err)
	}
	var tl *TooLargeError
	if _, err := File(p, 99, "module", ""); !errors.As(err, &tl) {
		t.Fatalf("got %v", err)
	}
	if b, err := File(p, 100, "module", ""); err != nil || len(b) != 100 {
		t.Fatalf("%d %v", len(b), err)
	}
	if _, err := File("/dev/zero", 1<<16, "snapshot", ""); !errors.As(err, &tl) {
		t.Fatalf("/dev/zero: %v", err)
	}
	if _, err := File(filepath.Join(t.TempDir(), "missing"), 1, "x", ""); !errors.Is(err, os.ErrNotExist) {
		t.Fatalf("missing file: %v", err)
	}
}

// A reader that knows its size (a regular file's) is read into one buffer of that size: a snapshot is
// megabytes, and a buffer grown by doubling copied it over and over and faulted in twice its pages.
func TestReadWithSizeHintTakesOneBuffer(t *testing.T) {
	data := bytes.Repeat([]byte("0123456789abcdef"), 1<<16) // 1 MiB
	var b []byte
	src := bytes.NewReader(data)
	r := WithSizeHint(src, int64(len(data)))
	allocs := testing.AllocsPerRun(5, func() {
		var err error
		src.Reset(data)
		if b, err = Read(r, 4<<20, "snapshot", ""); err != nil {
			t.Fatal(err)
		}
	})
	if !bytes.Equal(b, data) {
		t.Fatalf("read %d bytes, not the %d given", len(b), len(data))
	}
	if allocs > 2 { // the buffer (and the LimitReader)
		t.Fatalf("%v allocations to read 1 MiB of known size; want the one buffer", allocs)
	}
	// a wrong hint costs a copy, never a byte
	for _, hint := range []int64{0, 10, int64(len(data)) - 1, int64(len(data)) * 2} {
		got, err := Read(WithSizeHint(bytes.NewReader(data), hint), 4<<20, "snapshot", "")
		if err != nil || !bytes.Equal(got, data) {
			t.Fatalf("hint %d: read %d bytes (%v), not the %d given", hint, len(got), err, len(data))
		}
	}
	var tl *TooLargeError
	if _, err := Read(WithSizeHint(bytes.NewReader(data), 10), int64(len(data))-1, "snapshot", ""); !errors.As(err, &tl) {
		t.Fatalf("one byte over the limit, hinted small: %v", err)
	}
}
