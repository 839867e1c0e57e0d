package v1beta2

import (
	"errors"
	"fmt"
	"math"
	"regexp"
	"strconv"
	"strings"

	"k8s.io/apimachinery/pkg/api/resource"
)

// MiB is the unit Spark reads driver and executor memory settings in when they have no suffix.
const MiB int64 = 1 << 20

// sparkByteUnit is the size in bytes of a unit Spark's JavaUtils.byteStringAs accepts.
func sparkByteUnit(suffix string) (int64, bool) {
	switch suffix {
	case "b":
		return 1, true
	case "k", "kb":
		return 1 << 10, true
	case "m", "mb":
		return 1 << 20, true
	case "g", "gb":
		return 1 << 30, true
	case "t", "tb":
		return 1 << 40, true
	case "p", "pb":
		return 1 << 50, true
	}
	return 0, false
}

var sparkFractionString = regexp.MustCompile(`^([0-9]+\.[0-9]+)([a-z]+)?$`)

// ParseSparkMemory parses a memory setting the way Spark parses spark.driver.memory,
// spark.executor.memory and their memoryOverhead: surrounding spaces are ignored, the unit is
// case-insensitive, the number is a whole number, and the units are binary (k = KiB, m = MiB,
// g = GiB, t = TiB, p = PiB, with an optional trailing b, or b alone for bytes). A number without
// a unit is in MiB. It returns the size in bytes.
//
// Spark itself stores these settings in whole MiB, rounding down, so "1536k" is 1 MiB to Spark;
// callers building Spark properties should divide by MiB.
func ParseSparkMemory(s string) (int64, error) {
	n, err := sparkMemoryBytes(s)
	if err != nil {
		return 0, fmt.Errorf("memory size %q: %w", s, err)
	}
	return n, nil
}

// sparkMemoryBytes is ParseSparkMemory with errors that do not repeat the input, for field
// errors, which show it already.
func sparkMemoryBytes(s string) (int64, error) {
	lower := strings.ToLower(strings.TrimSpace(s))
	digits, suffix, ok := splitByteString(lower)
	if !ok {
		if sparkFractionString.MatchString(lower) {
			return 0, errors.New("Spark does not accept fractions: use a whole number of a smaller unit, for example 1536m instead of 1.5g")
		}
		return 0, errors.New("not a Spark memory size: use a whole number with an optional unit b, k, m, g, t or p, for example 512m or 2g (no unit means MiB)")
	}
	unit := MiB
	if suffix != "" {
		u, ok := sparkByteUnit(suffix)
		if !ok {
			return 0, fmt.Errorf("unknown unit %q: use b, k, m, g, t or p (optionally followed by b)", suffix)
		}
		unit = u
	}
	n, err := strconv.ParseInt(digits, 10, 64)
	if err != nil || n > math.MaxInt64/unit {
		return 0, errors.New("too large")
	}
	return n * unit, nil
}

// splitByteString splits a "<digits><lower-case letters>" string, the shape Spark's byte
// strings have, without a regular expression's allocations: every sync parses several.
func splitByteString(s string) (digits, suffix string, ok bool) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	if i == 0 {
		return "", "", false
	}
	for j := i; j < len(s); j++ {
		if s[j] < 'a' || s[j] > 'z' {
			return "", "", false
		}
	}
	return s[:i], s[i:], true
}

// ParseMemoryLimit parses a memoryLimit field. A value with a lower-case Spark unit ("4g",
// "512m", "2gb") is read as Spark reads memory, in binary units, as the Kubeflow operator does;
// anything else must be a Kubernetes quantity ("4Gi", "4G", "4294967296"). The Spark reading
// comes first because "512m" means 512 MiB to a Spark user but half a byte to Kubernetes.
func ParseMemoryLimit(s string) (resource.Quantity, error) {
	q, err := memoryLimitQuantity(s)
	if err != nil {
		return resource.Quantity{}, fmt.Errorf("memory limit %q: %w", s, err)
	}
	return q, nil
}

func memoryLimitQuantity(s string) (resource.Quantity, error) {
	trimmed := strings.TrimSpace(s)
	if _, suffix, ok := splitByteString(trimmed); ok && suffix != "" {
		if _, ok := sparkByteUnit(suffix); ok {
			bytes, err := sparkMemoryBytes(trimmed)
			if err != nil {
				return resource.Quantity{}, err
			}
			return *resource.NewQuantity(bytes, resource.BinarySI), nil
		}
	}
	q, err := resource.ParseQuantity(trimmed)
	if err != nil {
		return resource.Quantity{}, errors.New("neither a Spark memory size such as 4g nor a Kubernetes quantity such as 4Gi")
	}
	return q, nil
}
