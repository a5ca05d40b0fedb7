//go:build !unix

package wasm

// openEntryFlags: elsewhere an entry is opened plainly, after its listing found a regular file.
const openEntryFlags = 0
