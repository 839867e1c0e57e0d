package children

import (
	"regexp"
	"strconv"
)

// sparkVersion is the major.minor of spec.sparkVersion, which decides what the image's
// entrypoint and Spark's executor side understand.
type sparkVersion struct{ major, minor int }

var versionPattern = regexp.MustCompile(`^([0-9]+)\.([0-9]+)`)

// parseSparkVersion reads spec.sparkVersion; an unreadable one is taken as current Spark, which
// validation has already refused anyway.
func parseSparkVersion(s string) sparkVersion {
	m := versionPattern.FindStringSubmatch(s)
	if m == nil {
		return sparkVersion{major: 4}
	}
	major, _ := strconv.Atoi(m[1])
	minor, _ := strconv.Atoi(m[2])
	return sparkVersion{major: major, minor: minor}
}

func (v sparkVersion) atLeast(major, minor int) bool {
	return v.major > major || (v.major == major && v.minor >= minor)
}
