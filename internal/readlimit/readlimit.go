// Package readlimit is the one way the host reads a file, standard input or a response body whose size
// someone else chose: at most the limit plus one byte, so /dev/zero, an endless pipe or a 2 GB file is
// refused after reading just over the limit, with an error that says which limit and how to raise it.
package readlimit

import (
	"errors"
	"fmt"
	"io"
	"os"
)

// TooLargeError is returned when the input is larger than its limit.
type TooLargeError struct {
	What   string // "snapshot", "module", ...
	Limit  int64
	Raise  string // how to raise the limit ("--memory-limit-mib"), or ""
	Format string // the format the limit is for ("YAML"), or "" for any
	Note   string // what else to do, or ""
}

func (e *TooLargeError) Error() string {
	msg := fmt.Sprintf("%s is larger than the %s limit", e.What, size(e.Limit))
	if e.Format != "" {
		msg += " for " + e.Format
	}
	if e.Raise != "" {
		msg += " (raise it with " + e.Raise + ")"
	}
	if e.Note != "" {
		msg += "; " + e.Note
	}
	return msg
}

func size(n int64) string {
	if n >= 1<<20 && n%(1<<20) == 0 {
		return fmt.Sprintf("%d MiB", n>>20)
	}
	return fmt.Sprintf("%d-byte", n)
}

// NotTextError is returned for input that cannot be the text it should be: binary data such as
// /dev/zero, a compressed file or a module where a JSON or YAML document belongs.
type NotTextError struct {
	What   string
	Offset int    // of the first byte no such text holds
	Want   string // "JSON or YAML"
}

func (e *NotTextError) Error() string {
	return fmt.Sprintf("%s is not %s: byte %d is NUL (binary data, not UTF-8 text)", e.What, e.Want, e.Offset)
}

// Read reads r to its end, or fails with a *TooLargeError once more than limit bytes have come. A reader
// that knows its size (WithSizeHint: File's, for a regular file) is read into one buffer of that size, not
// one grown by doubling: a snapshot is megabytes, and every copy and fresh page of a grown buffer is a
// short-lived command's time.
func Read(r io.Reader, limit int64, what, raise string) ([]byte, error) {
	b, err := readAll(io.LimitReader(r, limit+1), min(SizeHint(r), limit))
	if err != nil {
		return nil, err
	}
	if int64(len(b)) > limit {
		return nil, &TooLargeError{What: what, Limit: limit, Raise: raise}
	}
	return b, nil
}

// readAll is io.ReadAll starting with room for size bytes and the read that finds the end.
func readAll(r io.Reader, size int64) ([]byte, error) {
	b := make([]byte, 0, max(size+1, 512))
	for {
		n, err := r.Read(b[len(b):cap(b)])
		b = b[:len(b)+n]
		if err == io.EOF {
			return b, nil
		}
		if err != nil {
			return b, err
		}
		if len(b) == cap(b) {
			b = append(b, 0)[:len(b)] // as io.ReadAll grows
		}
	}
}

// sizeHinter is a reader that knows how many bytes it holds.
type sizeHinter interface{ SizeHint() int64 }

type hinted struct {
	io.Reader
	size int64
}

func (h hinted) SizeHint() int64 { return h.size }

// WithSizeHint is r, said to hold about size bytes (a hint for the buffer Read takes them into: a wrong one
// costs a copy, never a byte).
func WithSizeHint(r io.Reader, size int64) io.Reader { return hinted{r, size} }

// SizeHint is how many bytes r says it holds (WithSizeHint), or 0.
func SizeHint(r io.Reader) int64 {
	if h, ok := r.(sizeHinter); ok {
		return max(h.SizeHint(), 0)
	}
	return 0
}

// File reads the named file like Read; a regular file larger than limit is refused before reading.
func File(path string, limit int64, what, raise string) ([]byte, error) {
	return FileWith(path, limit, what, raise, Read)
}

// FileWith is File reading the open file with read, a reading of the same limits that also judges what
// it reads (internal/yamljson.Read).
func FileWith(path string, limit int64, what, raise string, read func(r io.Reader, limit int64, what, raise string) ([]byte, error)) ([]byte, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var r io.Reader = f
	if st, err := f.Stat(); err == nil && st.Mode().IsRegular() {
		if st.Size() > limit {
			return nil, &TooLargeError{What: what, Limit: limit, Raise: raise}
		}
		r = WithSizeHint(f, st.Size())
	}
	b, err := read(r, limit, what, raise)
	var tl *TooLargeError
	var nt *NotTextError
	if err != nil && !errors.As(err, &tl) && !errors.As(err, &nt) {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	return b, err
}
