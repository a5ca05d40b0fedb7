//go:build wasip1 && !tinygo

package main

import "runtime"

// afterExport collects garbage at the end of each export so a standard-Go instance's memory
// stays flat across calls (its GC would otherwise grow the heap between calls).
func afterExport() { runtime.GC() }
