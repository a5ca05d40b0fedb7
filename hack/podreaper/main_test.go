package main

import (
	"testing"
	"time"

	corev1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
)

func TestTerminationDelay(t *testing.T) {
	grace := func(s int64) *int64 { return &s }
	for _, c := range []struct {
		name  string
		ann   map[string]string
		grace *int64
		def   time.Duration
		want  time.Duration
	}{
		{"no annotation: the default", nil, grace(30), time.Second, time.Second},
		{"the annotation's delay", map[string]string{terminationAnnotation: "3s"}, grace(30), 0, 3 * time.Second},
		{"at most the grace period", map[string]string{terminationAnnotation: "1m"}, grace(10), 0, 10 * time.Second},
		{"no grace period given", map[string]string{terminationAnnotation: "1m"}, nil, 0, time.Minute},
		{"not a duration: the default", map[string]string{terminationAnnotation: "soon"}, grace(30), 2 * time.Second, 2 * time.Second},
		{"negative: the default", map[string]string{terminationAnnotation: "-1s"}, grace(30), 0, 0},
	} {
		p := &corev1.Pod{ObjectMeta: metav1.ObjectMeta{Name: "web-0", Annotations: c.ann, DeletionGracePeriodSeconds: c.grace}}
		if got := terminationDelay(p, c.def); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}
