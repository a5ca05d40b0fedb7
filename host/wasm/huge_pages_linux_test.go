package wasm

import (
	"bufio"
	"fmt"
	"os"
	"strings"
	"testing"
	"unsafe"
)

// A guest memory's reservation is advised for huge pages: /proc/self/smaps lists "hg" among the mapping's
// VmFlags (the kernel's record of MADV_HUGEPAGE), whatever the machine's THP setting.
func TestReservationAdvisedForHugePages(t *testing.T) {
	s := reserve(64 << 20)
	if s == nil {
		t.Fatal("reserve(64 MiB) reserved nothing")
	}
	defer s.release()
	flags, err := vmFlags(uintptr(unsafe.Pointer(&s.b[0])))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(" "+flags+" ", " hg ") {
		t.Fatalf("the reservation's VmFlags are %q: no hg (MADV_HUGEPAGE)", flags)
	}
}

// vmFlags returns the VmFlags line of the mapping of /proc/self/smaps that starts at addr.
func vmFlags(addr uintptr) (string, error) {
	f, err := os.Open("/proc/self/smaps")
	if err != nil {
		return "", err
	}
	defer f.Close()
	start := fmt.Sprintf("%x-", addr)
	in := false
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case strings.HasPrefix(line, start):
			in = true
		case in && strings.HasPrefix(line, "VmFlags:"):
			return strings.TrimSpace(strings.TrimPrefix(line, "VmFlags:")), nil
		}
	}
	if err := sc.Err(); err != nil {
		return "", err
	}
	return "", fmt.Errorf("no mapping starts at %#x in /proc/self/smaps", addr)
}
