//go:build e2e

package e2e

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"
)

// Sharded chaos (issue 34 item 4): per seed, replicas of `ordinal controller --shards` roll sets in several
// namespaces while the seed's schedule SIGKILLs shard owners and adds replicas mid-rollout. Invariants, read
// from the API server: every rollout completes; no ordinal ever had two pods at once (the pod trackers), nor
// more than one pod per revision (v1, v2: two); a replica's writes to a set never resume after another
// replica's (writers: the pods' create and delete events, whose source.host is the writing replica, in time
// order), so no set is written by two replicas within one lease term; and at the end every shard is held by
// the replica it prefers among the live ones.
//
// ORDINAL_SHARD_CHAOS_RUNS seeds (default 1, so `make e2e` runs one) from ORDINAL_SHARD_CHAOS_FIRST_SEED
// (default 1); ORDINAL_SHARD_CHAOS_SEEDS=3,9 replays given seeds.
func TestShardedChaos(t *testing.T) {
	requireController(t)
	seeds := seedsFromEnv(t, "ORDINAL_SHARD_CHAOS", 1)
	var failing []string
	progress, err := os.Create(filepath.Join(cfg.artifacts, "shard-chaos-progress.txt"))
	if err != nil {
		t.Fatal(err)
	}
	defer progress.Close()
	for i, seed := range seeds {
		ok := t.Run(fmt.Sprintf("seed-%d", seed), func(t *testing.T) { shardChaosRun(t, seed) })
		if !ok {
			failing = append(failing, strconv.FormatInt(seed, 10))
		}
		fmt.Fprintf(progress, "%d/%d seed %d ok=%v failing so far %v\n", i+1, len(seeds), seed, ok, failing)
	}
	t.Logf("sharded chaos: %d seeds, %d failing %v", len(seeds), len(failing), failing)
	if len(failing) > 0 {
		t.Errorf("failing seeds: %s (replay: ORDINAL_SHARD_CHAOS_SEEDS=%s)", strings.Join(failing, ","), strings.Join(failing, ","))
	}
}

// shardChaosEvent is one step of a seed's schedule: at a delay after the rollout's edit, SIGKILL a live
// replica (the i-th, modulo those live) or start a new one.
type shardChaosEvent struct {
	at   time.Duration
	kill bool
	i    int
}

func shardChaosRun(t *testing.T, seed int64) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	t.Cleanup(cancel)
	rng := rand.New(rand.NewPCG(uint64(seed), 34))
	leaseNs := newNamespace(t, ctx)
	run := fmt.Sprintf("%d-%04d", seed, rand.IntN(10000))
	// three namespaces in distinct shards (names differing in their last characters alone often share one:
	// FNV-1a's high bits barely move with them)
	var namespaces []string
	used := map[int]bool{}
	for k := 0; len(namespaces) < 3 && k < 1000; k++ {
		ns := fmt.Sprintf("e2e-shchaos-%s-%d", run, k)
		if i := controllerShardOf(ns); !used[i] {
			used[i] = true
			namespaces = append(namespaces, newNamespaceNamed(t, ctx, ns))
		}
	}
	if len(namespaces) < 3 {
		t.Fatalf("no three namespaces in distinct shards: %v", namespaces)
	}
	// Kills come before joins: members only join after the last kill, so a shard never returns to a
	// replica it left (which writers would report as writes resumed).
	var schedule []shardChaosEvent
	kills, joins := 1+rng.IntN(2), 1+rng.IntN(2)
	var at time.Duration
	for k := 0; k < kills; k++ {
		at += time.Duration(rng.IntN(3000)) * time.Millisecond
		schedule = append(schedule, shardChaosEvent{at: at, kill: true, i: rng.IntN(8)})
	}
	for k := 0; k < joins; k++ {
		at += time.Duration(rng.IntN(4000)) * time.Millisecond
		schedule = append(schedule, shardChaosEvent{at: at})
	}
	t.Logf("seed %d: namespaces %v (shards %v); schedule %+v", seed, namespaces, shardsOf(namespaces), schedule)

	n := 0
	var live []*controllerProc
	join := func() {
		n++
		live = append(live, startShardReplica(t, ctx, leaseNs, fmt.Sprintf("r%d-%s", n, run), run))
	}
	ids := func() []string {
		var out []string
		for _, p := range live {
			out = append(out, p.name)
		}
		return out
	}
	join()
	join()
	waitShardHolders(t, ctx, leaseNs, ids())
	trackers := rollOutShardedSets(t, ctx, namespaces, run)

	for _, ns := range namespaces {
		patchSet(t, ctx, ns, "db", setVersion("v2"))
	}
	edit := time.Now()
	for _, ev := range schedule {
		time.Sleep(time.Until(edit.Add(ev.at)))
		if ev.kill && len(live) > 0 {
			i := ev.i % len(live)
			live[i].kill()
			live = append(live[:i], live[i+1:]...)
		} else if !ev.kill {
			join()
		}
	}
	if len(live) == 0 {
		join()
	}
	for _, ns := range namespaces {
		waitSet(t, ctx, ns, "db", "v2 rolled out through the kills and joins", 5*time.Minute, rolledOut(3))
	}
	waitShardHolders(t, ctx, leaseNs, ids())
	for _, ns := range namespaces {
		trackers[ns].checkInvariants()
		for o, c := range trackers[ns].podsPerOrdinal() {
			if c > 2 {
				t.Errorf("%s: ordinal %d had %d pods over two revisions", ns, o, c)
			}
		}
		t.Logf("%s: writers in order %v", ns, writers(t, ctx, ns, "db"))
	}
	for _, p := range live {
		p.stop()
	}
}

func shardsOf(namespaces []string) []int {
	var out []int
	for _, ns := range namespaces {
		out = append(out, controllerShardOf(ns))
	}
	return out
}
