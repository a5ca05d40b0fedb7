package inplaceready

import (
	"strings"
	"testing"
	"time"
)

func TestSameImage(t *testing.T) {
	for _, c := range []struct {
		status, spec string
		same         bool
	}{
		{"docker.io/library/nginx:1.27", "nginx:1.27", true},
		{"docker.io/library/nginx:latest", "nginx", true},
		{"docker.io/bitnami/redis:7", "bitnami/redis:7", true},
		{"index.docker.io/library/nginx:1", "nginx:1", true},
		{"registry.k8s.io/pause:3.9", "registry.k8s.io/pause:3.9", true},
		{"localhost:5000/app:1", "localhost:5000/app:1", true},
		{"docker.io/library/nginx:1.26", "nginx:1.27", false},
		{"quay.io/nginx:1.27", "nginx:1.27", false},
		{"sha256:abcd", "nginx:1.27", true},
	} {
		if got := SameImage(c.status, c.spec); got != c.same {
			t.Errorf("SameImage(%q, %q) = %v", c.status, c.spec, got)
		}
	}
}

// Judge's verdicts, each with what it waits for: the first container that does not run its spec, in spec
// order; the latest start when every one does.
func TestJudge(t *testing.T) {
	t0 := time.Date(2026, 11, 27, 10, 0, 0, 0, time.UTC)
	app := Container{Name: "app", Image: "a:2", Resources: Resources{RequestCPU: "500m", LimitMemory: "1Gi"}}
	side := Container{Name: "side", Image: "s:1"}
	for _, c := range []struct {
		name string
		pod  Pod
		want Verdict
	}{
		{"no status", Pod{Containers: []Container{app}}, Verdict{Pending: true, Container: "app", Waiting: WaitStatus, Want: "a:2"}},
		{"old image", Pod{Containers: []Container{app, side}, Statuses: []Status{{Name: "app", Image: "a:1", StartedAt: t0}, {Name: "side", Image: "s:1", StartedAt: t0}}},
			Verdict{Pending: true, Container: "app", Waiting: WaitImage, Has: "a:1", Want: "a:2", LastStart: t0}},
		{"restarted", Pod{Containers: []Container{app, side}, Statuses: []Status{{Name: "side", Image: "s:1", StartedAt: t0}, {Name: "app", Image: "docker.io/library/a:2", StartedAt: t0.Add(time.Minute)}}},
			Verdict{LastStart: t0.Add(time.Minute)}},
		{"old resources", Pod{Containers: []Container{app}, Statuses: []Status{{Name: "app", Image: "a:2", StartedAt: t0, Resources: &Resources{RequestCPU: "0.5", LimitMemory: "512Mi"}}}},
			Verdict{Pending: true, Container: "app", Waiting: WaitResources, Resource: "limits.memory", Has: "512Mi", Want: "1Gi", LastStart: t0}},
		{"resources reported alike", Pod{Containers: []Container{app}, Statuses: []Status{{Name: "app", Image: "a:2", StartedAt: t0, Resources: &Resources{RequestCPU: "0.5", LimitMemory: "1024Mi", RequestMemory: "1Gi"}}}},
			Verdict{LastStart: t0}},
		{"resize pending", Pod{Containers: []Container{app}, Statuses: []Status{{Name: "app", Image: "a:2", StartedAt: t0}}, Resizing: true},
			Verdict{Pending: true, Waiting: WaitResize, LastStart: t0}},
		// the old container, reported by its image's ID (which SameImage takes as the spec's), by a kubelet whose
		// status is still of the generation before the update
		{"status behind the update", Pod{Containers: []Container{app}, Statuses: []Status{{Name: "app", Image: "sha256:1111", StartedAt: t0}},
			Generation: 3, ObservedGeneration: 2},
			Verdict{Pending: true, Waiting: WaitGeneration, Has: "2", Want: "3", LastStart: t0}},
		{"status of the update", Pod{Containers: []Container{app}, Statuses: []Status{{Name: "app", Image: "sha256:2222", StartedAt: t0.Add(time.Minute)}},
			Generation: 3, ObservedGeneration: 3},
			Verdict{LastStart: t0.Add(time.Minute)}},
		{"generation not reported", Pod{Containers: []Container{app}, Statuses: []Status{{Name: "app", Image: "a:2", StartedAt: t0}}, Generation: 3},
			Verdict{LastStart: t0}},
	} {
		if got := Judge(c.pod); got != c.want {
			t.Errorf("%s: %+v, want %+v", c.name, got, c.want)
		}
	}
	// a spec pinned by digest, which the runtime reports by one of the image's tags: the status's imageID has
	// the digest the spec pins (or another one: the old image)
	pinned := Container{Name: "app", Image: "nginx@sha256:" + strings.Repeat("a", 64)}
	tagged := Status{Name: "app", Image: "docker.io/library/nginx:1.27", ImageID: "docker.io/library/nginx@sha256:" + strings.Repeat("a", 64), StartedAt: t0}
	if got := Judge(Pod{Containers: []Container{pinned}, Statuses: []Status{tagged}}); got != (Verdict{LastStart: t0}) {
		t.Errorf("pinned by digest, reported by a tag of it: %+v, want it running its spec", got)
	}
	tagged.ImageID = "docker.io/library/nginx@sha256:" + strings.Repeat("b", 64)
	if got := Judge(Pod{Containers: []Container{pinned}, Statuses: []Status{tagged}}); !got.Pending || got.Waiting != WaitImage {
		t.Errorf("pinned by digest, running another: %+v, want it waited for", got)
	}
	if Applies("", "") || Applies("web-1", "web-2") || !Applies("web-2", "web-2") {
		t.Error("Applies: want a record naming the pod's own revision only")
	}
}

// OtherTag tells a status naming the spec's repository by another tag; not another repository, the same
// tag spelt otherwise, or a digest.
func TestOtherTag(t *testing.T) {
	for _, c := range []struct {
		status, spec string
		want         bool
	}{
		{"app:latest", "app:2", true},
		{"docker.io/library/app:latest", "app:2", true},
		{"example.com/team/app:1", "example.com/team/app:2", true},
		{"app", "app:2", true}, // untagged is :latest
		{"app:2", "app:2", false},
		{"docker.io/library/app:2", "app:2", false},
		{"other:2", "app:2", false},
		{"app@sha256:abc", "app:2", false},
		{"sha256:abc", "app:2", false},
		{"localhost:5000/app:1", "localhost:5000/app:2", true},
		{"localhost:5000/app", "localhost:5001/app", false},
	} {
		if got := OtherTag(c.status, c.spec); got != c.want {
			t.Errorf("OtherTag(%q, %q) = %v, want %v", c.status, c.spec, got, c.want)
		}
	}
}
