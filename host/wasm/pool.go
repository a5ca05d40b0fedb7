package wasm

import (
	"context"
	"sync"
)

// pool hands out module instances, each to one goroutine at a time. A wasm
// instance is single-threaded state (stack pointer, heap, the direct path's
// buffers), so it must never be shared; instantiating costs ~1 ms, so idle
// instances are kept for reuse. slots bounds how many exist at once.
type pool[T any] struct {
	slots    chan struct{}
	newInst  func(context.Context) (T, error)
	closeFn  func(T)
	mu       sync.Mutex
	idle     []T // LIFO: the most recently used instance is the warmest
	closed   bool
	counters *counters
}

func newPool[T any](size int, c *counters, newInst func(context.Context) (T, error), closeFn func(T)) *pool[T] {
	return &pool[T]{slots: make(chan struct{}, size), newInst: newInst, closeFn: closeFn, counters: c}
}

// get returns an idle instance or a new one (fresh reports which), waiting for a
// free slot while MaxInstances calls are in flight.
func (p *pool[T]) get(ctx context.Context) (inst T, fresh bool, err error) {
	return p.getPreferring(ctx, nil)
}

// getPreferring is get that takes the idle instance prefer picks, if one is idle (a Session's own).
func (p *pool[T]) getPreferring(ctx context.Context, prefer func(T) bool) (inst T, fresh bool, err error) {
	select {
	case p.slots <- struct{}{}:
	case <-ctx.Done():
		return inst, false, ctx.Err()
	}
	p.mu.Lock()
	if p.closed {
		p.mu.Unlock()
		<-p.slots
		return inst, false, ErrClosed
	}
	if n := len(p.idle); n > 0 {
		i := n - 1
		if prefer != nil {
			for j := range p.idle {
				if prefer(p.idle[j]) {
					i = j
					break
				}
			}
		}
		inst = p.idle[i]
		p.idle = append(p.idle[:i], p.idle[i+1:]...)
		p.mu.Unlock()
		return inst, false, nil
	}
	p.mu.Unlock()
	inst, err = p.newInst(ctx)
	if err != nil {
		<-p.slots
		return inst, false, err
	}
	p.counters.instantiated.Add(1)
	return inst, true, nil
}

// put gives an instance back. keep=false (it failed, trapped, timed out, or is
// due for recycling) closes it: a wasm instance's state after a trap is
// undefined, so it is never reused.
func (p *pool[T]) put(inst T, keep bool) {
	p.mu.Lock()
	if keep && !p.closed {
		p.idle = append(p.idle, inst)
		p.mu.Unlock()
	} else {
		p.mu.Unlock()
		p.closeFn(inst)
		p.counters.closed.Add(1)
	}
	<-p.slots
}

// close closes idle instances; instances in use are closed when put back.
func (p *pool[T]) close() {
	p.mu.Lock()
	idle := p.idle
	p.idle, p.closed = nil, true
	p.mu.Unlock()
	for _, inst := range idle {
		p.closeFn(inst)
	}
}
