package v1beta2

import (
	"math"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
)

// ceiling is the saturated value: 9223372036 s, about 292 years.
const ceiling = time.Duration(9223372036) * time.Second

func TestSeconds(t *testing.T) {
	tests := []struct {
		name string
		n    int64
		want time.Duration
	}{
		{"zero", 0, 0},
		{"one", 1, time.Second},
		{"negative counts as zero", -1, 0},
		{"most negative counts as zero", math.MinInt64, 0},
		{"the validation maximum, ten years", MaxSeconds, 10 * 365 * 24 * time.Hour},
		{"the longest Duration in whole seconds", 9223372036, ceiling},
		{"one second more saturates", 9223372037, ceiling},
		{"1e10 saturates instead of wrapping", 1e10, ceiling},
		{"MaxInt64 saturates", math.MaxInt64, ceiling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, Seconds(tt.n))
		})
	}
}

func TestSecondsTimes(t *testing.T) {
	tests := []struct {
		name     string
		n, times int64
		want     time.Duration
	}{
		{"zero interval", 0, 5, 0},
		{"zero times", 5, 0, 0},
		{"negative interval", -5, 3, 0},
		{"negative times", 5, -3, 0},
		{"small product", 10, 3, 30 * time.Second},
		{"product at the ceiling", 4611686018, 2, ceiling},
		{"product one second over the ceiling", 4611686019, 2, ceiling},
		{"maximum interval, many attempts", MaxSeconds, math.MaxInt32, ceiling},
		{"maximum interval, 29 attempts fit", MaxSeconds, 29, time.Duration(29*MaxSeconds) * time.Second},
		{"product overflowing int64 itself", math.MaxInt64, math.MaxInt64, ceiling},
		{"one times MaxInt64", 1, math.MaxInt64, ceiling},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			assert.Equal(t, tt.want, SecondsTimes(tt.n, tt.times))
		})
	}
}

// TestSecondsRoundTrip checks the reason the ceiling is in whole seconds: a wait at the
// ceiling, as float seconds turned back into nanoseconds (Metacontroller's resyncAfterSeconds),
// stays within a Duration.
func TestSecondsRoundTrip(t *testing.T) {
	secs := math.Ceil(Seconds(math.MaxInt64).Seconds())
	assert.Less(t, secs*float64(time.Second), float64(math.MaxInt64))
}
