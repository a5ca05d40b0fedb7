package main

import (
	"testing"

	"github.com/ordinal-dev/ordinal/policies/kit/kittest"
)

func TestHandoffFixtures(t *testing.T) { kittest.Run(t, ".", decide) }
