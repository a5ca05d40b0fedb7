package wasm

import "sync"

// tailBuffer keeps the last bytes a guest printed (stdout and stderr), so errors
// can quote TinyGo's panic message ("panic: runtime error: out of memory")
// without letting a chatty guest grow host memory. ABI v1 modules print nothing
// otherwise.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const outputTail = 2048

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - outputTail; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

// take returns what was written since the last take and empties the buffer.
func (t *tailBuffer) take() string {
	t.mu.Lock()
	defer t.mu.Unlock()
	s := string(t.buf)
	t.buf = t.buf[:0]
	return s
}
