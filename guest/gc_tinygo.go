//go:build wasip1 && tinygo

package main

// afterExport does nothing under TinyGo, whose collector runs on allocation.
func afterExport() {}
