package children

import (
	"crypto/sha256"
	"encoding/hex"
	"strings"
)

// Kubernetes name limits.
const (
	maxLabelName     = 63  // DNS-1123 / DNS-1035 label: Services, volumes, ports' owners
	maxSubdomainName = 253 // DNS-1123 subdomain: Pods, ConfigMaps, Ingresses
	shortHashLen     = 8
)

// boundedName returns base+suffix when it fits in max characters, and otherwise base cut short
// followed by a hash of the full name and the suffix, so that two long names that share a
// prefix still differ.
func boundedName(base, suffix string, max int) string {
	full := base + suffix
	if len(full) <= max {
		return full
	}
	sum := sha256.Sum256([]byte(full))
	hash := hex.EncodeToString(sum[:])[:shortHashLen]
	keep := max - len(suffix) - len(hash) - 1
	cut := strings.TrimRight(base[:max0(keep)], "-.")
	return cut + "-" + hash + suffix
}

func max0(n int) int {
	if n < 0 {
		return 0
	}
	return n
}

// sanitizeLabelValue turns an application name into a valid label value the way Spark builds
// spark-app-name: lower case, anything but [a-z0-9-] becomes "-", runs of "-" collapse, at most
// 63 characters, no "-" at either end.
func sanitizeLabelValue(s string) string {
	var b strings.Builder
	b.Grow(len(s))
	dash := false
	for _, r := range strings.ToLower(s) {
		ok := (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9')
		if !ok {
			if !dash {
				b.WriteByte('-')
			}
			dash = true
			continue
		}
		dash = false
		b.WriteRune(r)
	}
	out := b.String()
	if len(out) > maxLabelName {
		out = out[:maxLabelName]
	}
	return strings.Trim(out, "-")
}
