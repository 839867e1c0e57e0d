package children

import (
	"crypto/sha256"
	"encoding/hex"
	"strconv"

	"k8s.io/apimachinery/pkg/types"
)

// Submission identifies one attempt of an application. The sync hook records all three fields
// in the status, so that a later sync rebuilds exactly the objects it asked for.
type Submission struct {
	// Attempt counts submissions of the current spec, from 1.
	Attempt int32
	// SubmissionID is a UUID naming the attempt, the value of LabelSubmissionID.
	SubmissionID string
	// AppID is the Spark application id (spark.app.id): "spark-" and 32 hex digits.
	AppID string
}

// NewSubmission derives the ids of an attempt from a seed (the parent's uid, and whatever else
// must tell attempts apart) and the attempt number. spark-submit draws them at random; deriving
// them keeps the hook a pure function and a replayed sync harmless.
func NewSubmission(seed types.UID, attempt int32) Submission {
	sum := sha256.Sum256([]byte(string(seed) + "#" + strconv.Itoa(int(attempt))))
	return Submission{
		Attempt:      attempt,
		SubmissionID: formatUUID(sum[16:32]),
		AppID:        "spark-" + hex.EncodeToString(sum[:16]),
	}
}

// formatUUID writes 16 bytes as an RFC 9562 name-based (version 5 layout) UUID.
func formatUUID(b []byte) string {
	var u [16]byte
	copy(u[:], b)
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	h := hex.EncodeToString(u[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:32]
}
