package controller

import (
	"fmt"
	"hash/fnv"
	"math/bits"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"
)

// The pure part of sharding (docs/scale.md): which shard a namespace is in, which live replica a shard
// prefers, and what a replica does about each shard. sharding.go runs it against Leases.

// ShardOf returns the shard of namespace ns among n: shard i is the hash range [i*2^64/n, (i+1)*2^64/n) of
// FNV-1a 64 of the namespace's name, the hash KEP-5866's shardRange(object.metadata.namespace, ...)
// computes in the API server. A set, its pods, revisions and claims share a namespace, so they share a shard.
func ShardOf(ns string, n int) int {
	h := fnv.New64a()
	_, _ = h.Write([]byte(ns))
	return shardOfHash(h.Sum64(), n)
}

// shardOfHash is the shard among n of a namespace whose name hashes to h.
func shardOfHash(h uint64, n int) int {
	if n <= 1 {
		return 0
	}
	// floor(hash * n / 2^64): the high word of the 128-bit product.
	hi, _ := bits.Mul64(h, uint64(n))
	return int(hi)
}

// shardBound returns the first hash of shard i among n, ceil(i*2^64/n), as the API server's shard selectors
// spell a bound ('0x' and 16 lowercase hex digits, '0x10000000000000000' for 2^64). ShardOf(ns, n) == i
// exactly when that hash of ns is in [shardBound(i, n), shardBound(i+1, n)): floor(h*n/2^64) == i is
// i*2^64 <= h*n < (i+1)*2^64, and for an integer h, h >= x and h < x are h >= ceil(x) and h < ceil(x).
func shardBound(i, n int) string {
	if i >= n {
		return "0x10000000000000000"
	}
	q, r := bits.Div64(uint64(i), 0, uint64(n)) // (i*2^64) / n; i < n, so q fits in 64 bits
	if r != 0 {
		q++ // i < n: ceil(i*2^64/n) <= 2^64 - 2^64/n, never 2^64
	}
	return fmt.Sprintf("0x%016x", q)
}

// ShardSelector is the KEP-5866 shard selector (metav1.ListOptions.ShardSelector) of shard i among n: the
// objects of exactly the namespaces ShardOf puts in shard i.
func ShardSelector(i, n int) string {
	return fmt.Sprintf("shardRange(object.metadata.namespace, '%s', '%s')", shardBound(i, n), shardBound(i+1, n))
}

// PreferredOwner returns the member that shard prefers among members (rendezvous hashing: the highest hash
// of shard and identity), "" when there are none. A member joining or leaving changes the choice of only
// the shards it wins or held, about shards/members of them.
func PreferredOwner(shard int, members []string) string {
	best, bestScore := "", uint64(0)
	for _, m := range members {
		h := fnv.New64a()
		_, _ = h.Write([]byte(strconv.Itoa(shard)))
		_, _ = h.Write([]byte{0})
		_, _ = h.Write([]byte(m))
		// FNV's last byte barely moves its high bits: mix (splitmix64's finalizer) so that the
		// order of two members' scores is not decided by their names' common prefix.
		s := mix64(h.Sum64())
		if best == "" || s > bestScore || (s == bestScore && m < best) {
			best, bestScore = m, s
		}
	}
	return best
}

func mix64(z uint64) uint64 {
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9
	z = (z ^ (z >> 27)) * 0x94d049bb133111eb
	return z ^ (z >> 31)
}

// shardDecision is what one replica does about its shards at one look at the Leases.
type shardDecision struct {
	Acquire []int // start competing for the shard's Lease (it prefers this replica)
	Abandon []int // stop competing (not yet held; it now prefers another member)
	Release []int // drain the shard's syncs, then release its Lease
}

// decideShards decides, for replica self, which shards to compete for, stop competing for and give up.
// live maps each live member (self included) to when it became live; held and competing are the shards
// self holds and competes for (held ⊆ competing). A held shard that prefers another member is given up only
// once that member has been live for settle (two lease durations): replicas starting together do not pass
// shards back and forth while each sees the others appear.
func decideShards(self string, n int, live map[string]time.Time, held, competing map[int]bool, now time.Time, settle time.Duration) shardDecision {
	members := make([]string, 0, len(live))
	for m := range live {
		members = append(members, m)
	}
	sort.Strings(members)
	var d shardDecision
	for i := 0; i < n; i++ {
		pref := PreferredOwner(i, members)
		switch {
		case held[i]:
			if pref != self && pref != "" && now.Sub(live[pref]) >= settle {
				d.Release = append(d.Release, i)
			}
		case competing[i]:
			if pref != self {
				d.Abandon = append(d.Abandon, i)
			}
		case pref == self:
			d.Acquire = append(d.Acquire, i)
		}
	}
	return d
}

// memberTracker tells which members are live from their Leases as client-go's leader election tells
// whether a Lease is held: by when this replica saw its record change (not the renewTime written by
// another machine's clock). A member is live while its holder is set and its record changed less than its
// leaseDuration ago on this clock.
type memberTracker struct {
	seen map[string]*memberSeen // by Lease name
}

type memberSeen struct {
	holder, renew string
	duration      time.Duration
	changed       time.Time // on this clock
	liveSince     time.Time // zero while not live
}

// observe records a member Lease's holder, renewTime (as written) and leaseDuration at now.
func (t *memberTracker) observe(lease, holder, renew string, duration time.Duration, now time.Time) {
	if t.seen == nil {
		t.seen = map[string]*memberSeen{}
	}
	s := t.seen[lease]
	if s == nil {
		s = &memberSeen{changed: now}
		t.seen[lease] = s
	} else if s.holder != holder || s.renew != renew {
		s.changed = now
	}
	s.holder, s.renew, s.duration = holder, renew, duration
}

// forget drops a Lease that is gone.
func (t *memberTracker) forget(lease string) { delete(t.seen, lease) }

// live returns the live members (by holder identity) and since when each is continuously live.
func (t *memberTracker) live(now time.Time) map[string]time.Time {
	out := map[string]time.Time{}
	for _, s := range t.seen {
		if s.holder == "" || now.Sub(s.changed) >= s.duration {
			s.liveSince = time.Time{}
			continue
		}
		if s.liveSince.IsZero() {
			s.liveSince = s.changed
		}
		if since, ok := out[s.holder]; !ok || s.liveSince.Before(since) {
			out[s.holder] = s.liveSince
		}
	}
	return out
}

// Lease names: <id>-shard-<i> and <id>-member-<identity>, id being --leader-election-id.
func shardLeaseName(id string, i int) string { return fmt.Sprintf("%s-shard-%d", id, i) }

func memberLeasePrefix(id string) string { return id + "-member-" }

var notNameChars = regexp.MustCompile(`[^a-z0-9.-]+`)

// memberLeaseName is the member Lease of identity: the identity made a valid object name (hostname_pid is
// not one), with a hash of the identity when that changed it, so that two identities never share a Lease.
func memberLeaseName(id, identity string) string {
	s := strings.Trim(notNameChars.ReplaceAllString(strings.ToLower(identity), "-"), "-.")
	if s != identity {
		h := fnv.New32a()
		_, _ = h.Write([]byte(identity))
		s = fmt.Sprintf("%s-%08x", s, h.Sum32())
	}
	name := memberLeasePrefix(id) + s
	if len(name) > 253 {
		return ""
	}
	return name
}
