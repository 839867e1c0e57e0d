package sparkapp

import (
	"net/url"
	"strings"
)

// historyURL is the History Server page of an attempt that logs to the operator's default event
// log dir: the jobs of the application, which the History Server lists under its Spark
// application id. It is empty without a History Server or when the attempt logs elsewhere, where
// that server would not find it.
func historyURL(base string, defaultEventLog bool, appID string) string {
	if base == "" || !defaultEventLog || appID == "" {
		return ""
	}
	return strings.TrimRight(base, "/") + "/history/" + url.PathEscape(appID) + "/jobs/"
}
