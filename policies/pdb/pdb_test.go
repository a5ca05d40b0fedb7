package main

import (
	"testing"

	"github.com/ordinal-dev/ordinal/policies/kit/kittest"
)

func TestPDBFixtures(t *testing.T) { kittest.Run(t, ".", decide) }
