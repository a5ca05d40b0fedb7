package statefulset

import (
	"hash/fnv"
	"strconv"
)

// safeAlphabet is the alphabet of k8s.io/apimachinery/pkg/util/rand.SafeEncodeString
// (no vowels, no confusable characters).
const safeAlphabet = "bcdfghjklmnpqrstvwxz2456789"

// safeEncode maps every byte of s onto the safe alphabet.
func safeEncode(s string) string {
	b := make([]byte, len(s))
	for i := 0; i < len(s); i++ {
		b[i] = safeAlphabet[int(s[i])%len(safeAlphabet)]
	}
	return string(b)
}

// hashRevision is the ControllerRevision hash: FNV-1 (32 bit) over the data bytes, then the
// decimal collision count, printed in decimal and safe-encoded.
func hashRevision(data []byte, collisionCount int32) string {
	h := fnv.New32()
	if len(data) > 0 {
		h.Write(data)
	}
	h.Write([]byte(strconv.FormatInt(int64(collisionCount), 10)))
	return safeEncode(strconv.FormatUint(uint64(h.Sum32()), 10))
}

// revisionName is "<set name truncated to 223 bytes>-<hash>".
func revisionName(setName, hash string) string {
	if len(setName) > maxRevisionNameBase {
		setName = setName[:maxRevisionNameBase]
	}
	return setName + "-" + hash
}
