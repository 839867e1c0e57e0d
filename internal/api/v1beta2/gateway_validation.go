package v1beta2

import (
	"net"
	"regexp"
	"strings"

	"k8s.io/apimachinery/pkg/util/validation"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

// Gateway API limits (gateway.networking.k8s.io/v1): the API server refuses a route beyond them.
const (
	maxRouteParentRefs = 32
	maxRouteHostnames  = 16
	maxRoutePath       = 1024
)

var (
	routeHostname = regexp.MustCompile(`^(\*\.)?[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	routePath     = regexp.MustCompile(`^(?:[-A-Za-z0-9/._~!$&'()*+,;=:@]|[%][0-9a-fA-F]{2})+$`)
	// placeholders stand in for {{$appName}}, {{$appNamespace}} and {{$appId}} when a value is
	// checked before the names are known: a valid label in hostnames and paths alike.
	placeholders = strings.NewReplacer("{{$appName}}", "app", "{{$appNamespace}}", "ns", "{{$appId}}", "spark-0")
)

// IsRouteHostname returns why h cannot be a Gateway API route hostname, nothing when it can.
func IsRouteHostname(h string) []string {
	var msgs []string
	if len(h) > validation.DNS1123SubdomainMaxLength {
		msgs = append(msgs, "must be no more than 253 characters")
	}
	if net.ParseIP(h) != nil {
		msgs = append(msgs, "must be a DNS name, not an IP address")
	} else if !routeHostname.MatchString(h) {
		msgs = append(msgs, "must be a lower-case DNS name such as spark.example.com, optionally starting with *.")
	}
	return msgs
}

// IsHTTPRoutePath returns why p cannot be the value of an HTTPRoute PathPrefix match.
func IsHTTPRoutePath(p string) []string {
	var msgs []string
	if !strings.HasPrefix(p, "/") {
		msgs = append(msgs, "must start with /")
	}
	if len(p) > maxRoutePath {
		msgs = append(msgs, "must be no more than 1024 characters")
	}
	if !routePath.MatchString(p) {
		msgs = append(msgs, "must be URL path characters only (no spaces, ?, # or {{ }} other than the placeholders)")
	}
	for _, bad := range []string{"//", "/./", "/../", "%2f", "%2F"} {
		if strings.Contains(p, bad) {
			msgs = append(msgs, "must not contain "+bad)
		}
	}
	if strings.HasSuffix(p, "/..") || strings.HasSuffix(p, "/.") {
		msgs = append(msgs, "must not end in /. or /..")
	}
	return msgs
}

// checkExpanded checks a value with its placeholders standing in for names; an unknown
// placeholder is named as such rather than reported as a bad character.
func checkExpanded(v string, check func(string) []string) []string {
	expanded := placeholders.Replace(v)
	if strings.Contains(expanded, "{{") {
		return []string{"has a placeholder other than {{$appName}}, {{$appNamespace}} and {{$appId}}"}
	}
	return check(expanded)
}

// ValidateHTTPRouteConfiguration checks a UI HTTPRoute request with its placeholders standing
// in for the names; the builder checks the expanded values again.
func ValidateHTTPRouteConfiguration(r *HTTPRouteConfiguration, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	errs := validateParentRefs(r.ParentRefs, p.Child("parentRefs"))
	errs = append(errs, validateHostnames(r.Hostnames, p.Child("hostnames"))...)
	if r.PathPrefix != "" {
		if msgs := checkExpanded(r.PathPrefix, IsHTTPRoutePath); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Child("pathPrefix"), r.PathPrefix,
				strings.Join(msgs, "; ")+", for example /{{$appNamespace}}/{{$appName}}"))
		}
	}
	return append(errs, validAnnotations(r.Annotations, p, "annotations")...)
}

// ValidateGRPCRouteConfiguration checks a Spark Connect GRPCRoute request.
func ValidateGRPCRouteConfiguration(r *GRPCRouteConfiguration, p *field.Path) field.ErrorList {
	if r == nil {
		return nil
	}
	errs := validateParentRefs(r.ParentRefs, p.Child("parentRefs"))
	errs = append(errs, validateHostnames(r.Hostnames, p.Child("hostnames"))...)
	return append(errs, validAnnotations(r.Annotations, p, "annotations")...)
}

// validateParentRefs checks a list of Gateway references.
func validateParentRefs(refs []GatewayParentReference, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(refs) > maxRouteParentRefs {
		errs = append(errs, field.TooMany(p, len(refs), maxRouteParentRefs))
	}
	seen := map[GatewayParentReference]bool{}
	for i, r := range refs {
		ip := p.Index(i)
		if r.Name == "" {
			errs = append(errs, field.Required(ip.Child("name"), "the Gateway's name"))
		} else {
			for _, msg := range validation.IsDNS1123Subdomain(r.Name) {
				errs = append(errs, field.Invalid(ip.Child("name"), r.Name, msg))
			}
		}
		if r.Namespace != "" {
			for _, msg := range validation.IsDNS1123Label(r.Namespace) {
				errs = append(errs, field.Invalid(ip.Child("namespace"), r.Namespace, msg))
			}
		}
		if r.SectionName != "" {
			for _, msg := range validation.IsDNS1123Subdomain(r.SectionName) {
				errs = append(errs, field.Invalid(ip.Child("sectionName"), r.SectionName, "the name of a Gateway listener: "+msg))
			}
		}
		if seen[r] {
			errs = append(errs, field.Duplicate(ip, r))
		}
		seen[r] = true
	}
	return errs
}

func validateHostnames(hosts []string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(hosts) > maxRouteHostnames {
		errs = append(errs, field.TooMany(p, len(hosts), maxRouteHostnames))
	}
	seen := map[string]bool{}
	for i, h := range hosts {
		if msgs := checkExpanded(h, IsRouteHostname); len(msgs) > 0 {
			errs = append(errs, field.Invalid(p.Index(i), h, strings.Join(msgs, "; ")))
		}
		if seen[h] {
			errs = append(errs, field.Duplicate(p.Index(i), h))
		}
		seen[h] = true
	}
	return errs
}
