//go:build ordinal_extended

package statefulset

// The extended module (build tag ordinal_extended): the faithful module plus the extensions of
// extensions.go, each off unless the set opts in with its annotation. It describes itself as
// moduleVersion "<version>+extended" and lists its extensions.
const (
	extendedBuild   = true
	extendedVariant = "+extended"
)
