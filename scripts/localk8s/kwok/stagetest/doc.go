// Package kwokstagetest tests the kwok Stages of scripts/localk8s/kwok/ with kwok's own selector and template
// code (sigs.k8s.io/kwok v0.8.0, the version scripts/cluster-up.sh runs), without a cluster: which stage each
// example pod selects, and the status the stage writes. A module of its own so that the repository's go.mod
// does not depend on kwok. Run: cd scripts/localk8s/kwok/stagetest && GOWORK=off go test .
package kwokstagetest
