//go:build unix && !linux

package wasm

// adviseHugePages: transparent huge pages are Linux's; elsewhere a memory takes the kernel's default pages.
func adviseHugePages([]byte) {}
