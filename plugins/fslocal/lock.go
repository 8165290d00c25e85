package fslocal

import (
	"context"
	"slices"
	"sync"
)

// keyedMutex is one FIFO lock per key. A key's entry exists only while the
// lock is held or awaited, so the map does not grow with the files touched.
type keyedMutex struct {
	mu      sync.Mutex
	waiters map[string][]chan struct{} // present = held; the queue in order
}

// lock takes the lock of key, in arrival order. It gives up with ctx's
// error when ctx ends before the lock is handed over.
func (k *keyedMutex) lock(ctx context.Context, key string) error {
	k.mu.Lock()
	queue, held := k.waiters[key]
	if !held {
		if k.waiters == nil {
			k.waiters = make(map[string][]chan struct{})
		}
		k.waiters[key] = nil
		k.mu.Unlock()
		return nil
	}
	turn := make(chan struct{})
	k.waiters[key] = append(queue, turn)
	k.mu.Unlock()

	select {
	case <-turn:
		return nil
	case <-ctx.Done():
		k.mu.Lock()
		queue := k.waiters[key]
		if i := slices.Index(queue, turn); i >= 0 {
			k.waiters[key] = slices.Delete(queue, i, i+1)
			k.mu.Unlock()
			return ctx.Err()
		}
		k.mu.Unlock()
		k.unlock(key) // handed over meanwhile: pass it on
		return ctx.Err()
	}
}

// unlock hands the lock to the oldest waiter, or forgets the key.
func (k *keyedMutex) unlock(key string) {
	k.mu.Lock()
	defer k.mu.Unlock()
	queue := k.waiters[key]
	if len(queue) == 0 {
		delete(k.waiters, key)
		return
	}
	k.waiters[key] = queue[1:]
	close(queue[0])
}

// held is the number of keys locked or awaited (for leak tests).
func (k *keyedMutex) held() int {
	k.mu.Lock()
	defer k.mu.Unlock()
	return len(k.waiters)
}
