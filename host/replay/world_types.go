package replay

import "github.com/ordinal-dev/ordinal/host/replay/world"

// The world's types and constants that a scenario or a timeline is written in (a scenario's kubelet
// model and times, a timeline's world events), named here too so that a scenario's readers need only
// this package.
type (
	KubeletConfig = world.KubeletConfig
	PodBehavior   = world.PodBehavior
	Duration      = world.Duration
	WorldEvent    = world.WorldEvent
	APIError      = world.APIError
	Pace          = world.Pace
	LearnedPace   = world.LearnedPace
)

// Kubelet models and their default delays (world.ModelDelays, world.ModelTick).
const (
	ModelDelays             = world.ModelDelays
	ModelTick               = world.ModelTick
	DefaultTick             = world.DefaultTick
	DefaultStartDelay       = world.DefaultStartDelay
	DefaultReadyDelay       = world.DefaultReadyDelay
	DefaultTerminationDelay = world.DefaultTerminationDelay
	NeverReadyAnnotation    = world.NeverReadyAnnotation
	PaceDefaults            = world.PaceDefaults
	PaceScenario            = world.PaceScenario
	PaceLearned             = world.PaceLearned
)

// Reasons of world events (world.ReasonDeleted, ...).
const (
	ReasonDeleted       = world.ReasonDeleted
	ReasonDeleting      = world.ReasonDeleting
	ReasonRunning       = world.ReasonRunning
	ReasonReady         = world.ReasonReady
	ReasonLostReadiness = world.ReasonLostReadiness
	ReasonRemoved       = world.ReasonRemoved
	ReasonExpanded      = world.ReasonExpanded
	// ReasonImageByAnotherTag is also a preview's step (docs/in-place-updates.md, "An image reported by
	// another tag")
	ReasonImageByAnotherTag = world.ReasonImageByAnotherTag
)
