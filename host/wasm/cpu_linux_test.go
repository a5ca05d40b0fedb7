//go:build linux

package wasm_test

import "syscall"

// threadCPU is the CPU time the calling thread has used, in ns (user and system): on a shared, loaded machine
// a benchmark locked to its thread can compare it where wall time cannot.
func threadCPU() int64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_THREAD, &u) != nil {
		return 0
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
