package schedule

import (
	"encoding/json"
	"fmt"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// BenchmarkScheduledSync measures one sync of a schedule that is due, with 0 or 100 observed
// runs (decoded, sorted, pruned and rebuilt), and the same plus encoding the answer.
func BenchmarkScheduledSync(b *testing.B) {
	now := time.Date(2024, 6, 3, 10, 0, 1, 0, time.UTC)
	for _, n := range []int{0, 100} {
		p := newParent("*/5 * * * *")
		p.Spec.TimeZone = "Europe/Paris"
		p.Spec.SuccessfulRunHistoryLimit = ptr.To[int32](100)
		p.Status.ScheduleState = v1beta2.ScheduleStateScheduled
		p.Status.NextRun = metaTime("2024-06-03T10:00:00Z")
		runs := make([]*observedRun, n)
		for i := range runs {
			runs[i] = runAt(now.Add(-time.Duration(i+1)*5*time.Minute).Truncate(time.Minute), v1beta2.ApplicationStateCompleted)
		}
		req := request(b, p, runs...)

		b.Run(fmt.Sprintf("runs=%d", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				if _, _, err := Sync(req, now, Config{}); err != nil {
					b.Fatal(err)
				}
			}
		})
		b.Run(fmt.Sprintf("runs=%d/encoded", n), func(b *testing.B) {
			b.ReportAllocs()
			for b.Loop() {
				resp, _, err := Sync(req, now, Config{})
				require.NoError(b, err)
				if _, err := json.Marshal(resp); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
