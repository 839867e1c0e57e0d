package sparkctl

import (
	"fmt"
	"strings"

	"k8s.io/apimachinery/pkg/runtime/schema"

	"github.com/sparkhooks/sparkhooks/internal/api/v1alpha1"
	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// kind is one of the resource kinds the commands work on.
type kind struct {
	Kind    string
	GVR     schema.GroupVersionResource
	aliases []string
}

var (
	kindSparkApp = kind{
		Kind:    v1beta2.KindSparkApplication,
		GVR:     v1beta2.GroupVersion.WithResource("sparkapplications"),
		aliases: []string{"sparkapplication", "sparkapplications", "sparkapp", "sparkapps", "app", "apps"},
	}
	kindScheduled = kind{
		Kind:    v1beta2.KindScheduledSparkApplication,
		GVR:     v1beta2.GroupVersion.WithResource("scheduledsparkapplications"),
		aliases: []string{"scheduledsparkapplication", "scheduledsparkapplications", "scheduledsparkapp", "scheduledsparkapps", "scheduled", "ssa"},
	}
	kindConnect = kind{
		Kind:    v1alpha1.KindSparkConnect,
		GVR:     v1alpha1.GroupVersion.WithResource("sparkconnects"),
		aliases: []string{"sparkconnect", "sparkconnects", "connect", "connects"},
	}
	allKinds = []kind{kindSparkApp, kindScheduled, kindConnect}
)

// resourceName is how kubectl names the resource in messages: sparkapplications.sparkoperator.k8s.io.
func (k kind) resourceName() string {
	return strings.TrimSuffix(k.GVR.Resource, "s") + "." + k.GVR.Group
}

func kindByAlias(alias string) (kind, error) {
	for _, k := range allKinds {
		for _, a := range k.aliases {
			if strings.EqualFold(a, alias) {
				return k, nil
			}
		}
	}
	return kind{}, usageErrorf("unknown kind %q: want sparkapp, scheduledsparkapp or sparkconnect", alias)
}

func kindOf(apiVersion, k string) (kind, bool) {
	for _, candidate := range allKinds {
		if candidate.Kind == k && candidate.GVR.GroupVersion().String() == apiVersion {
			return candidate, true
		}
	}
	return kind{}, false
}

// parseRef reads NAME or KIND/NAME (kubectl's form); a bare name is a SparkApplication unless
// only is set, which then is the one kind the command accepts.
func parseRef(arg string, accepted ...kind) (kind, string, error) {
	k := kindSparkApp
	if len(accepted) > 0 {
		k = accepted[0]
	}
	name := arg
	if prefix, rest, ok := strings.Cut(arg, "/"); ok {
		var err error
		if k, err = kindByAlias(prefix); err != nil {
			return kind{}, "", err
		}
		name = rest
	}
	if name == "" {
		return kind{}, "", usageErrorf("empty name in %q", arg)
	}
	if len(accepted) > 0 {
		ok := false
		for _, a := range accepted {
			ok = ok || a.Kind == k.Kind
		}
		if !ok {
			return kind{}, "", usageErrorf("%s: this command works on %s", arg, kindList(accepted))
		}
	}
	return k, name, nil
}

func kindList(kinds []kind) string {
	names := make([]string, len(kinds))
	for i, k := range kinds {
		names[i] = k.Kind
	}
	return strings.Join(names, " and ")
}

func notFoundError(k kind, namespace, name string) error {
	return fmt.Errorf("%s %q not found in namespace %q", k.Kind, name, namespace)
}
