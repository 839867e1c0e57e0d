package v1beta2

import (
	"math"
	"time"
)

// MaxSeconds is the largest value accepted in a field counted in seconds (timeouts, retry
// intervals, time to live, starting deadline): ten years of 365 days. Anything longer means
// "never" in practice, and the bound keeps every such wait, even multiplied by a retry count,
// far from what a time.Duration holds. The CRD markers repeat it as a literal.
const MaxSeconds int64 = 10 * 365 * 24 * 60 * 60

// maxWholeSeconds is the longest whole number of seconds a time.Duration holds.
const maxWholeSeconds = math.MaxInt64 / int64(time.Second)

// Seconds converts a number of seconds from a spec into a Duration. time.Duration(n) *
// time.Second wraps for n above about 9.2e9 and turns a huge timeout into a negative one,
// which has already expired; Seconds saturates instead. Whole seconds are kept even at the
// ceiling, so that the result converts back to seconds (a resync, a message) without
// overflowing either. A negative n, which validation refuses, counts as zero: no wait is
// shorter than none.
func Seconds(n int64) time.Duration {
	return SecondsTimes(n, 1)
}

// SecondsTimes is Seconds(n*times) without the overflow of the product: a retry interval
// grows with the number of attempts.
func SecondsTimes(n, times int64) time.Duration {
	if n <= 0 || times <= 0 {
		return 0
	}
	if n > maxWholeSeconds/times {
		return time.Duration(maxWholeSeconds) * time.Second
	}
	return time.Duration(n*times) * time.Second
}
