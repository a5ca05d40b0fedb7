package main

import (
	"testing"

	"github.com/ordinal-dev/ordinal/policies/kit/kittest"
)

func TestZonesFixtures(t *testing.T) { kittest.Run(t, ".", decide) }
