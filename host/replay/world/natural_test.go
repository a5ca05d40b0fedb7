package world

import (
	"reflect"
	"testing"
)

func TestSortNatural(t *testing.T) {
	got := []string{"web-10", "web-2", "data-web-1", "web-1", "web-02b", "web-0"}
	SortNatural(got)
	want := []string{"data-web-1", "web-0", "web-1", "web-2", "web-02b", "web-10"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("%v, want %v", got, want)
	}
}
