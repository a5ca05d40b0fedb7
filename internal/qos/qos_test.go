package qos

import "testing"

func TestClass(t *testing.T) {
	g := Resources{"100m", "100Mi", "100m", "100Mi"}
	limitsOnly := Resources{LimitCPU: "100m", LimitMemory: "100Mi"}
	for _, c := range []struct {
		name string
		pod  Pod
		want string
	}{
		{"none", Pod{Containers: []Resources{{}, {}}}, BestEffort},
		{"no containers", Pod{}, BestEffort},
		{"zero quantities count as none", Pod{Containers: []Resources{{"0", "0", "0", "0"}}}, BestEffort},
		{"requests equal limits", Pod{Containers: []Resources{g, g}}, Guaranteed},
		{"the same quantity spelt otherwise", Pod{Containers: []Resources{{"0.1", "104857600", "100m", "100Mi"}}}, Guaranteed},
		{"limits only: requests default to them", Pod{Containers: []Resources{limitsOnly}}, Guaranteed},
		{"requests below limits", Pod{Containers: []Resources{{"50m", "100Mi", "100m", "100Mi"}}}, Burstable},
		{"requests only", Pod{Containers: []Resources{{RequestCPU: "100m"}}}, Burstable},
		{"one container without limits", Pod{Containers: []Resources{g, {}}}, Burstable},
		{"a zero limit is no limit", Pod{Containers: []Resources{{"0", "100Mi", "0", "100Mi"}}}, Burstable},
		{"memory limit only", Pod{Containers: []Resources{{LimitMemory: "1Gi"}}}, Burstable},
		{"init container counts", Pod{Containers: []Resources{g}, InitContainers: []Resources{{RequestCPU: "1"}}}, Burstable},
		{"init container guaranteed too", Pod{Containers: []Resources{g}, InitContainers: []Resources{g}}, Guaranteed},
		{"unreadable and negative quantities count as none", Pod{Containers: []Resources{{"lots", "-1", "", ""}}}, BestEffort},
		{"pod level decides", Pod{Level: &Resources{LimitCPU: "1", LimitMemory: "1Gi"}, Containers: []Resources{{RequestCPU: "100m"}}}, Burstable},
		{"pod level: requests default to limits where no container requests", Pod{Level: &Resources{LimitCPU: "1", LimitMemory: "1Gi"}, Containers: []Resources{{}}}, Guaranteed},
		{"pod level: requests default to the containers'", Pod{Level: &Resources{LimitCPU: "1", LimitMemory: "1Gi"},
			Containers: []Resources{{RequestCPU: "500m", RequestMemory: "512Mi"}, {RequestCPU: "500m", RequestMemory: "512Mi"}}}, Guaranteed},
		{"pod level: an init container's larger request", Pod{Level: &Resources{LimitCPU: "1", LimitMemory: "1Gi"},
			Containers: []Resources{{RequestCPU: "500m"}}, InitContainers: []Resources{{RequestCPU: "1"}}}, Guaranteed},
		{"pod level without limits", Pod{Level: &Resources{RequestCPU: "1"}, Containers: []Resources{g}}, Burstable},
		{"pod level empty", Pod{Level: &Resources{}, Containers: []Resources{g}}, BestEffort},
		{"sums that overflow saturate", Pod{Containers: []Resources{{"9e15", "1", "9e15", "1"}, {"9e15", "1", "9e15", "1"}}}, Guaranteed},
	} {
		if got := Class(c.pod); got != c.want {
			t.Errorf("%s: %s, want %s", c.name, got, c.want)
		}
	}
}

func TestFormatMilli(t *testing.T) {
	for n, want := range map[int64]string{0: "0", 1: "1m", 1500: "1500m", 9223372036854775807: "9223372036854775807m"} {
		if got := formatMilli(n); got != want {
			t.Errorf("%d: %q, want %q", n, got, want)
		}
	}
}
