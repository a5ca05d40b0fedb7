// Test policy module for host/wasm: describes itself as the policy "bad" and, on evaluate, misbehaves as
// its input asks: "loop" spins forever, "trap" panics, "big" answers 1 MiB, "oom" allocates without end,
// "hold" holds the first write it is asked about for an hour (a well-formed hold, for the hosts' memory);
// anything else gets an answer holding nothing. Built by ../build.sh (TinyGo, wasip1).
package main

import (
	"bytes"

	"github.com/extism/go-pdk"
)

var spins uint64
var hoard [][]byte

func main() {}

//go:wasmexport describe
func describe() int32 {
	pdk.Output([]byte(`{"abi":1,"kind":"policy","policy":"bad","version":"0.0.0"}`))
	return 0
}

//go:wasmexport evaluate
func evaluate() int32 {
	in := pdk.Input()
	switch {
	case bytes.Contains(in, []byte(`"loop"`)):
		for {
			spins++
		}
	case bytes.Contains(in, []byte(`"trap"`)):
		panic("bad policy")
	case bytes.Contains(in, []byte(`"big"`)):
		pdk.Output(bytes.Repeat([]byte("x"), 1<<20))
		return 0
	case bytes.Contains(in, []byte(`"hold"`)):
		pdk.Output([]byte(`{"abi":1,"holds":[{"action":` + string(from(in)) + `,"reason":"Held","message":"held by the test policy","retryAfterSeconds":3600}]}`))
		return 0
	case bytes.Contains(in, []byte(`"oom"`)):
		for {
			hoard = append(hoard, make([]byte, 1<<20))
		}
	}
	pdk.Output([]byte(`{"abi":1,"holds":[]}`))
	return 0
}

// from is the input's "from" member's digits: the first action not yet issued.
func from(in []byte) []byte {
	i := bytes.Index(in, []byte(`"from":`))
	if i < 0 {
		return []byte("0")
	}
	d := in[i+len(`"from":`):]
	n := 0
	for n < len(d) && d[n] >= '0' && d[n] <= '9' {
		n++
	}
	return d[:n]
}
