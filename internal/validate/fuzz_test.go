package validate

import "testing"

// FuzzReview checks that no body makes the webhook panic or answer without the request's uid,
// for either kind.
func FuzzReview(f *testing.F) {
	for _, c := range loadGoldenCases(f) {
		f.Add(c.body)
	}
	kinds := Kinds()
	f.Fuzz(func(t *testing.T, body []byte) {
		for _, kind := range kinds {
			out, outcome, err := Review(body, kind, goldenNow)
			checkInvariants(t, body, out, outcome, err)
		}
	})
}
