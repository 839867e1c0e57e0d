package mutate

import (
	"fmt"
	"strings"
)

// Placeholders a policy may use in label and annotation values. Each stands for something only the
// pod knows; Spark users know {{APP_ID}} from Spark's own configuration.
const (
	placeholderAppID     = "APP_ID"    // label spark-app-selector
	placeholderAppName   = "APP_NAME"  // label sparkoperator.k8s.io/app-name
	placeholderNamespace = "NAMESPACE" // the pod's namespace
	placeholderRole      = "ROLE"      // label spark-role
)

func checkPlaceholders(tmpl string) error {
	rest := tmpl
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			if strings.Contains(rest, "}}") {
				return fmt.Errorf("%q has an unmatched \"}}\"", tmpl)
			}
			return nil
		}
		if strings.Contains(rest[:i], "}}") {
			return fmt.Errorf("%q has an unmatched \"}}\"", tmpl)
		}
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			return fmt.Errorf("%q has an unclosed \"{{\"", tmpl)
		}
		switch name := rest[i+2 : i+2+j]; name {
		case placeholderAppID, placeholderAppName, placeholderNamespace, placeholderRole:
		default:
			return fmt.Errorf("%q uses unknown placeholder {{%s}} (known: APP_ID, APP_NAME, NAMESPACE, ROLE)", tmpl, name)
		}
		rest = rest[i+2+j+2:]
	}
}

// expand replaces every placeholder with lookup's value. It reports false when a placeholder has
// no value on this pod: the caller then leaves the field alone instead of writing a half-filled
// value.
func expand(tmpl string, lookup func(name string) string) (string, bool) {
	if !strings.Contains(tmpl, "{{") {
		return tmpl, true
	}
	var b strings.Builder
	rest := tmpl
	for {
		i := strings.Index(rest, "{{")
		if i < 0 {
			b.WriteString(rest)
			return b.String(), true
		}
		j := strings.Index(rest[i+2:], "}}")
		if j < 0 {
			b.WriteString(rest)
			return b.String(), true
		}
		value := lookup(rest[i+2 : i+2+j])
		if value == "" {
			return "", false
		}
		b.WriteString(rest[:i])
		b.WriteString(value)
		rest = rest[i+2+j+2:]
	}
}
