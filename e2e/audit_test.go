//go:build e2e

package e2e

// The API server's audit log (scripts/cluster-up.sh: every write at Metadata level, Lease writes at Request
// level so that their holder is logged) read back: who wrote what, when the API server received it, and the
// Lease terms of the sharded replicas. A replica's requests carry its identity in their user agent
// (ordinal/<version>/<identity>, `ordinal controller --leader-elect`).

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"syscall"
	"testing"
	"time"
)

// auditEvent is the part of an audit event (audit.k8s.io/v1 Event) the checks read.
type auditEvent struct {
	Verb      string `json:"verb"`
	UserAgent string `json:"userAgent"`
	ObjectRef *struct {
		Resource    string `json:"resource"`
		Namespace   string `json:"namespace"`
		Name        string `json:"name"`
		Subresource string `json:"subresource"`
	} `json:"objectRef"`
	ResponseStatus *struct {
		Code int `json:"code"`
	} `json:"responseStatus"`
	Received time.Time `json:"requestReceivedTimestamp"`
	Done     time.Time `json:"stageTimestamp"`
	// Lease writes (Request level): the Lease written
	RequestObject *struct {
		Spec struct {
			HolderIdentity       *string `json:"holderIdentity"`
			LeaseDurationSeconds *int    `json:"leaseDurationSeconds"`
		} `json:"spec"`
	} `json:"requestObject"`
}

func (e *auditEvent) ok() bool { return e.ResponseStatus != nil && e.ResponseStatus.Code/100 == 2 }

func (e *auditEvent) write() bool {
	switch e.Verb {
	case "create", "update", "patch", "delete", "deletecollection":
		return true
	}
	return false
}

// replica is the identity in the user agent of an `ordinal controller` replica, "" for anyone else.
func (e *auditEvent) replica() string {
	parts := strings.SplitN(e.UserAgent, "/", 3)
	if len(parts) < 3 || parts[0] != "ordinal" {
		return ""
	}
	return parts[2]
}

// auditMark is where the audit log was when a test began: what it reads afterwards starts there.
type auditMark struct {
	path   string
	ino    uint64
	offset int64
	at     time.Time
}

// auditPath is the local cluster's audit log: $AUDIT_LOG as scripts/cluster-up.sh reads it, by default
// $LOCALK8S_RUN/logs/audit.log.
func auditPath() string {
	return getenv("AUDIT_LOG", filepath.Join(getenv("LOCALK8S_RUN", "/tmp/ordinal-localk8s"), "logs", "audit.log"))
}

// markAudit fails the test when the cluster keeps no audit log: the checks that need it are not skipped.
func markAudit(t *testing.T) auditMark {
	t.Helper()
	path := auditPath()
	fi, err := os.Stat(path)
	if err != nil {
		t.Fatalf("no audit log (%v): start the cluster with scripts/cluster-up.sh, which keeps one at $AUDIT_LOG", err)
	}
	return auditMark{path: path, ino: fi.Sys().(*syscall.Stat_t).Ino, offset: fi.Size(), at: time.Now()}
}

// readAudit returns the successful writes logged since m that mention one of the names (a namespace or
// object name: the lines are filtered by substring before they are decoded), in the order logged. The log
// may have been rotated since m (kube-apiserver's --audit-log-maxsize): then the backups written since are
// read too.
func readAudit(t *testing.T, m auditMark, names []string) []auditEvent {
	t.Helper()
	type part struct {
		path   string
		offset int64
		mod    time.Time
	}
	var parts []part
	fi, err := os.Stat(m.path)
	if err != nil {
		t.Fatalf("audit log: %v", err)
	}
	if fi.Sys().(*syscall.Stat_t).Ino == m.ino && fi.Size() >= m.offset {
		parts = append(parts, part{m.path, m.offset, fi.ModTime()})
	} else { // rotated: the backups (audit-<time>.log) modified since, then the current file, by age
		backups, _ := filepath.Glob(strings.TrimSuffix(m.path, ".log") + "-*.log")
		for _, b := range append(backups, m.path) {
			if bi, err := os.Stat(b); err == nil && !bi.ModTime().Before(m.at) {
				parts = append(parts, part{b, 0, bi.ModTime()})
			}
		}
		sort.Slice(parts, func(i, j int) bool { return parts[i].mod.Before(parts[j].mod) })
	}
	needles := make([][]byte, len(names))
	for i, n := range names {
		needles[i] = []byte(`"` + n + `"`)
	}
	var out []auditEvent
	for _, p := range parts {
		f, err := os.Open(p.path)
		if err != nil {
			t.Fatalf("audit log: %v", err)
		}
		if _, err := f.Seek(p.offset, io.SeekStart); err != nil {
			f.Close()
			t.Fatalf("audit log: %v", err)
		}
		sc := bufio.NewScanner(f)
		sc.Buffer(make([]byte, 1<<20), 16<<20)
		for sc.Scan() {
			line := sc.Bytes()
			match := false
			for _, n := range needles {
				if bytes.Contains(line, n) {
					match = true
					break
				}
			}
			if !match {
				continue
			}
			var e auditEvent
			if err := json.Unmarshal(line, &e); err != nil {
				f.Close()
				t.Fatalf("audit log %s: %v", p.path, err)
			}
			if e.write() && e.ok() && e.ObjectRef != nil {
				out = append(out, e)
			}
		}
		err = sc.Err()
		f.Close()
		if err != nil {
			t.Fatalf("audit log %s: %v", p.path, err)
		}
	}
	return out
}

// leaseTerm is a span in which one replica held a Lease, in the API server's time: from the write that made
// it the holder to its release, another's write, or the last renewal's receipt plus its duration (expiry),
// whichever came first.
type leaseTerm struct {
	holder     string
	start, end time.Time
	expired    bool // ended by expiry (no release): the next holder, if any, took it after the duration
}

// leaseTerms returns the terms of each Lease of namespace ns, by Lease name, from the successful writes.
// Successful writes of one Lease are ordered by receipt: each is conditional on the one before.
func leaseTerms(events []auditEvent, ns string) map[string][]leaseTerm {
	writes := map[string][]auditEvent{}
	for _, e := range events {
		if e.ObjectRef.Resource == "leases" && e.ObjectRef.Namespace == ns && e.RequestObject != nil && e.Verb != "delete" {
			writes[e.ObjectRef.Name] = append(writes[e.ObjectRef.Name], e)
		}
	}
	out := map[string][]leaseTerm{}
	for name, ws := range writes {
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].Received.Before(ws[j].Received) })
		var terms []leaseTerm
		var cur *leaseTerm
		var expiry time.Time
		for _, w := range ws {
			holder := ""
			if h := w.RequestObject.Spec.HolderIdentity; h != nil {
				holder = *h
			}
			d := 0
			if s := w.RequestObject.Spec.LeaseDurationSeconds; s != nil {
				d = *s
			}
			// a renewal received after the Lease expired starts a new term: anyone could have taken it
			if cur != nil && (holder != cur.holder || w.Received.After(expiry)) {
				if w.Received.After(expiry) {
					cur.end, cur.expired = expiry, true
				} else {
					cur.end = w.Received
				}
				terms = append(terms, *cur)
				cur = nil
			}
			if holder == "" {
				continue
			}
			if cur == nil {
				cur = &leaseTerm{holder: holder, start: w.Received}
			}
			expiry = w.Received.Add(time.Duration(d) * time.Second)
		}
		if cur != nil {
			cur.end = expiry
			terms = append(terms, *cur)
		}
		out[name] = terms
	}
	return out
}

// setWrites returns the successful writes of `ordinal controller` replicas to the objects a set of
// namespace ns owns or is (pods, claims, revisions, StatefulSets and their status), in order of receipt.
func setWrites(events []auditEvent, ns string) []auditEvent {
	var out []auditEvent
	for _, e := range events {
		switch e.ObjectRef.Resource {
		case "pods", "persistentvolumeclaims", "controllerrevisions", "statefulsets":
		default:
			continue
		}
		if e.ObjectRef.Namespace == ns && e.replica() != "" {
			out = append(out, e)
		}
	}
	sort.SliceStable(out, func(i, j int) bool { return out[i].Received.Before(out[j].Received) })
	return out
}

// termChecks is what checkTerms found for one set.
type termChecks struct {
	writes, writers int
	// late: writes received in their replica's term that the API server finished after it ended (the
	// in-flight window a lease cannot close: Kubernetes has no fencing); latest: the most after
	late   int
	latest time.Duration
}

// checkTerms asserts the lease-term invariant for the writes to a set in shard Lease `lease`: every write a
// replica made was received by the API server within one of that replica's terms of the Lease, and no two
// replicas' runs of writes interleave (each run, from its first write's receipt to its last write's end,
// ends before the next replica's begins).
func checkTerms(t *testing.T, what string, writes []auditEvent, terms []leaseTerm) termChecks {
	t.Helper()
	var c termChecks
	c.writes = len(writes)
	for _, w := range writes {
		var in *leaseTerm
		for k := range terms {
			if terms[k].holder == w.replica() && !w.Received.Before(terms[k].start) && !w.Received.After(terms[k].end) {
				in = &terms[k]
				break
			}
		}
		if in == nil {
			t.Errorf("%s: %s %s %s/%s by %s received at %s, outside its terms of the Lease (%s)", what, w.Verb,
				w.ObjectRef.Resource, w.ObjectRef.Name, w.ObjectRef.Subresource, w.replica(), w.Received.Format(time.RFC3339Nano), formatTerms(terms))
			continue
		}
		if after := w.Done.Sub(in.end); after > 0 {
			c.late++
			c.latest = max(c.latest, after)
		}
	}
	type run struct {
		who        string
		start, end time.Time
	}
	var runs []run
	for _, w := range writes {
		if len(runs) > 0 && runs[len(runs)-1].who == w.replica() {
			r := &runs[len(runs)-1]
			if w.Done.After(r.end) {
				r.end = w.Done
			}
			continue
		}
		runs = append(runs, run{w.replica(), w.Received, w.Done})
	}
	seen := map[string]bool{}
	for k, r := range runs {
		seen[r.who] = true
		if k > 0 && runs[k-1].end.After(r.start) {
			t.Errorf("%s: %s's writes (to %s) and %s's (from %s) interleave", what, runs[k-1].who,
				runs[k-1].end.Format(time.RFC3339Nano), r.who, r.start.Format(time.RFC3339Nano))
		}
	}
	c.writers = len(seen)
	return c
}

func formatTerms(terms []leaseTerm) string {
	var parts []string
	for _, tm := range terms {
		how := "released or taken"
		if tm.expired {
			how = "expired"
		}
		parts = append(parts, fmt.Sprintf("%s %s..%s %s", tm.holder, tm.start.Format("15:04:05.000000"), tm.end.Format("15:04:05.000000"), how))
	}
	return strings.Join(parts, "; ")
}
