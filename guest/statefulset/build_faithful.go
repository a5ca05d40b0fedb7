//go:build !ordinal_extended

package statefulset

// The faithful module (the default): upstream's controller, no extension. extensions.go's code is
// compiled out (extendedBuild is a constant), so its plans are upstream's byte for byte.
const (
	extendedBuild   = false
	extendedVariant = ""
)
