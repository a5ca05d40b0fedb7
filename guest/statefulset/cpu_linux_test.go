//go:build linux

package statefulset

import "syscall"

// processCPU is the CPU time the process has used, in ns (user and system): what a benchmark on a shared,
// loaded machine can compare where wall time cannot.
func processCPU() int64 {
	var u syscall.Rusage
	if syscall.Getrusage(syscall.RUSAGE_SELF, &u) != nil {
		return 0
	}
	return u.Utime.Nano() + u.Stime.Nano()
}
