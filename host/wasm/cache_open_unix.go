//go:build unix

package wasm

import "syscall"

// openEntryFlags open a cache entry without following a symbolic link (one put in an entry's place after the
// listing fails to open) or waiting for a writer (a FIFO opens at once, and is then refused as no regular file).
const openEntryFlags = syscall.O_NOFOLLOW | syscall.O_NONBLOCK
