package children

import (
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	"k8s.io/apimachinery/pkg/types"
	"k8s.io/apimachinery/pkg/util/validation"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

// name63 is a DNS-1035 label of exactly 63 characters, the longest application name.
var name63 = "spark-pi-" + strings.Repeat("abcdefghi-", 5) + "0123"

func withName(name string) func(*v1beta2.SparkApplication) {
	return func(app *v1beta2.SparkApplication) { app.Name = name }
}

func TestBoundedName(t *testing.T) {
	require.Len(t, name63, 63)
	require.Empty(t, validation.IsDNS1035Label(name63))

	tests := []struct {
		name, base, suffix string
		max                int
		want               string // "" to check only the shape
	}{
		{"short names are kept", "pi", "-driver-svc", maxLabelName, "pi-driver-svc"},
		{"exactly at the limit", strings.Repeat("a", 52), "-driver-svc", maxLabelName, strings.Repeat("a", 52) + "-driver-svc"},
		{"one over the limit", strings.Repeat("a", 53), "-driver-svc", maxLabelName, ""},
		{"63-character name", name63, "-driver-svc", maxLabelName, ""},
		{"UI service", name63, "-ui-svc", maxLabelName, ""},
		{"port service", name63, "-driver-8888", maxLabelName, ""},
		{"subdomain limit keeps the whole name", name63, "-ui-ingress", maxSubdomainName, name63 + "-ui-ingress"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := boundedName(tt.base, tt.suffix, tt.max)
			assert.LessOrEqual(t, len(got), tt.max)
			assert.True(t, strings.HasSuffix(got, tt.suffix), got)
			if tt.max == maxLabelName {
				assert.Empty(t, validation.IsDNS1035Label(got), "%q must be a DNS-1035 label", got)
			}
			if tt.want != "" {
				assert.Equal(t, tt.want, got)
				return
			}
			// Cut short: a prefix of the base, a dash, 8 hex digits, the suffix.
			assert.Regexp(t, `^[a-z0-9-]+-[0-9a-f]{8}`+regexp.QuoteMeta(tt.suffix)+`$`, got)
			prefix := strings.TrimSuffix(got, tt.suffix)
			prefix = prefix[:len(prefix)-9]
			assert.True(t, strings.HasPrefix(tt.base, prefix), "%q starts with a prefix of %q", got, tt.base)
			assert.NotEmpty(t, prefix)
			assert.Equal(t, got, boundedName(tt.base, tt.suffix, tt.max), "deterministic")
		})
	}

	// A cut that ends in "-" does not leave "--".
	base := strings.Repeat("a", 42) + "-" + strings.Repeat("b", 20)
	got := boundedName(base, "-driver-svc", maxLabelName)
	assert.NotContains(t, got, "--")
	assert.Empty(t, validation.IsDNS1035Label(got))
}

func TestServiceNamesOfLongApplications(t *testing.T) {
	// Two 63-character names sharing their first 60 characters.
	a := name63
	b := name63[:60] + "xyz"
	require.NotEqual(t, a, b)
	objsA := build(t, newApp(withName(a)), Options{EnableUIService: true})
	objsB := build(t, newApp(withName(b)), Options{EnableUIService: true})

	for _, objs := range []*Objects{objsA, objsB} {
		svc := objs.DriverService.Name
		assert.LessOrEqual(t, len(svc), maxLabelName)
		assert.Empty(t, validation.IsDNS1035Label(svc), "%q must be a DNS-1035 label", svc)
		host := sparkProps(t, objs)["spark.driver.host"]
		first, rest, _ := strings.Cut(host, ".")
		assert.Equal(t, svc, first, "spark.driver.host %q resolves to the driver Service", host)
		assert.Equal(t, testNamespace+".svc", rest)

		ui := objs.UIService.Name
		assert.LessOrEqual(t, len(ui), maxLabelName)
		assert.Empty(t, validation.IsDNS1035Label(ui), "%q must be a DNS-1035 label", ui)
		assert.True(t, strings.HasSuffix(ui, "-ui-svc"))
	}
	assert.NotEqual(t, objsA.DriverService.Name, objsB.DriverService.Name)
	assert.NotEqual(t, objsA.UIService.Name, objsB.UIService.Name)
	assert.NotEqual(t, objsA.ConfigMap.Name, objsB.ConfigMap.Name)

	// The driver Pod of a 63-character name is <name>-driver, a valid subdomain.
	assert.Equal(t, a+"-driver", objsA.DriverPod.Name)
	assert.Empty(t, validation.IsDNS1123Subdomain(objsA.DriverPod.Name))
	// And every label value on it is valid.
	for k, v := range objsA.DriverPod.Labels {
		assert.Empty(t, validation.IsValidLabelValue(v), "label %s=%q", k, v)
	}

	// A short name keeps Spark's own form, <app>-<attempt id>-driver-svc.
	objs := build(t, newApp(), Options{})
	assert.Equal(t, "pi-eb0f4b1c-driver-svc", objs.DriverService.Name)
	assert.Equal(t, "pi-eb0f4b1c-driver-svc.team-a.svc", sparkProps(t, objs)["spark.driver.host"])
}

// TestDriverServiceNamePerAttempt: every attempt's driver Service has a name no earlier attempt
// had. Executors an ended attempt left behind (owned by the application too, so they outlive
// their driver Pod) look the old name up while nothing answers, and cluster DNS caches that the
// name does not exist (CoreDNS: 30 s); a next attempt that reused the name got that answer, and
// its executors failed with UnknownHostException (found by TestKueueAdmitsOneAtATime in CI).
func TestDriverServiceNamePerAttempt(t *testing.T) {
	tests := []struct {
		name string
		opts Options
		want []string // the driver Service of attempts 1, 2, 3
	}{
		{"Kubeflow's API: the attempt's id, as Spark's random prefix", Options{},
			nil},
		{"Apache's API: Apache's numbering", Options{Apache: true},
			[]string{"pi-0-driver-svc", "pi-1-driver-svc", "pi-2-driver-svc"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			seen := map[string]bool{}
			for attempt := int32(1); attempt <= 3; attempt++ {
				sub := NewSubmission("3f7b1c2e-uid", attempt)
				objs, err := Build(prepare(t, newApp()), sub, tt.opts)
				require.NoError(t, err)
				svc := objs.DriverService.Name
				assert.False(t, seen[svc], "attempt %d reuses driver Service %s", attempt, svc)
				seen[svc] = true
				assert.Empty(t, validation.IsDNS1035Label(svc))
				assert.Equal(t, svc+".team-a.svc", sparkProps(t, objs)["spark.driver.host"])
				if tt.want != nil {
					assert.Equal(t, tt.want[attempt-1], svc)
				} else {
					assert.Equal(t, "pi-"+strings.TrimPrefix(sub.AppID, "spark-")[:8]+"-driver-svc", svc)
				}
			}
		})
	}
}

func TestConfigMapVolumeName(t *testing.T) {
	long := strings.Repeat("config.", 35) + "end" // a 248-character subdomain
	require.Empty(t, validation.IsDNS1123Subdomain(long))
	tests := []struct {
		name, configMap, want string
	}{
		{"plain", "app-config", "app-config-vol"},
		{"digits first", "1config", "1config-vol"},
		{"dotted", "app.config", ""},
		{"dotted and long", long, ""},
		{"long without dots", strings.Repeat("c", 70), ""},
		{"59 characters fit", strings.Repeat("c", 59), strings.Repeat("c", 59) + "-vol"},
		{"60 characters do not", strings.Repeat("c", 60), ""},
	}
	seen := map[string]string{}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := configMapVolumeName(tt.configMap)
			assert.Empty(t, validation.IsDNS1123Label(got), "%q must be a DNS-1123 label", got)
			assert.True(t, strings.HasSuffix(got, "-vol"), got)
			if tt.want != "" {
				assert.Equal(t, tt.want, got)
			} else {
				assert.Regexp(t, `^[a-z0-9-]+-[0-9a-f]{8}-vol$`, got)
			}
			assert.NotContains(t, seen, got, "distinct ConfigMaps get distinct volumes")
			seen[got] = tt.configMap
		})
	}
	// app.config and app-config must not share a volume name.
	assert.NotEqual(t, configMapVolumeName("app.config"), configMapVolumeName("app-config"))
	assert.True(t, strings.HasPrefix(configMapVolumeName("app.config"), "app-config-"))
}

func TestBoundedVolumeName(t *testing.T) {
	long := strings.Repeat("secret.", 30) + "end"
	require.Empty(t, validation.IsDNS1123Subdomain(long))
	tests := []struct {
		name, secret, want string
	}{
		{"plain", "gcp-key", "gcp-key-volume"},
		{"dotted", "tls.certs", ""},
		{"dotted and long", long, ""},
		{"long", strings.Repeat("s", 60), ""},
		{"56 characters fit", strings.Repeat("s", 56), strings.Repeat("s", 56) + "-volume"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := boundedVolumeName(tt.secret, "-volume")
			assert.Empty(t, validation.IsDNS1123Label(got), "%q must be a DNS-1123 label", got)
			if tt.want != "" {
				assert.Equal(t, tt.want, got)
			} else {
				assert.Regexp(t, `^[a-z0-9-]+-[0-9a-f]{8}-volume$`, got)
			}
		})
	}
	assert.NotEqual(t, boundedVolumeName("tls.certs", "-volume"), boundedVolumeName("tls-certs", "-volume"))

	// In a built Pod, a dotted Secret is mounted through such a volume.
	objs := build(t, newApp(func(a *v1beta2.SparkApplication) {
		a.Spec.Driver.Secrets = []v1beta2.SecretInfo{{Name: "tls.certs", Path: "/etc/tls", Type: v1beta2.SecretTypeGeneric}}
	}), Options{})
	name := boundedVolumeName("tls.certs", "-volume")
	vol := findVolume(objs.DriverPod.Spec.Volumes, name)
	require.NotNil(t, vol, "volumes: %v", volumeNames(objs.DriverPod.Spec.Volumes))
	require.NotNil(t, vol.Secret)
	assert.Equal(t, "tls.certs", vol.Secret.SecretName)
	m := findMount(driverContainer(t, objs).VolumeMounts, name)
	require.NotNil(t, m)
	assert.Equal(t, "/etc/tls", m.MountPath)
}

func TestSanitizeLabelValue(t *testing.T) {
	tests := []struct{ in, want string }{
		{"pi", "pi"},
		{"Spark Pi", "spark-pi"},
		{"My_App.Name", "my-app-name"},
		{"--a--b--", "a-b"},
		{"a...b", "a-b"},
		{" trim me ", "trim-me"},
		{"über-app", "ber-app"},
		{"日本", ""},
		{"UPPER123", "upper123"},
		{strings.Repeat("a", 70), strings.Repeat("a", 63)},
		{strings.Repeat("a", 62) + "-b", strings.Repeat("a", 62)},
		{strings.Repeat("a", 62) + "__b", strings.Repeat("a", 62)},
		{"-" + strings.Repeat("a", 63), strings.Repeat("a", 62)},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got := sanitizeLabelValue(tt.in)
			assert.Equal(t, tt.want, got)
			assert.Empty(t, validation.IsValidLabelValue(got))
		})
	}
}

func TestExecutorPodNamePrefix(t *testing.T) {
	for _, name := range []string{"pi", name63, name63[:41], name63[:45], strings.Repeat("a", 37) + "-" + strings.Repeat("b", 25)} {
		t.Run(name, func(t *testing.T) {
			app := prepare(t, newApp(withName(name)))
			prefixes := map[string]bool{}
			for attempt := int32(1); attempt <= 3; attempt++ {
				sub := NewSubmission(app.UID, attempt)
				objs, err := Build(app, sub, Options{})
				require.NoError(t, err)
				prefix := sparkProps(t, objs)["spark.kubernetes.executor.podNamePrefix"]
				require.NotEmpty(t, prefix)
				// Spark 3.x: prefix + "-exec-" + Int.MaxValue digits within a DNS label.
				assert.LessOrEqual(t, len(prefix), 47, prefix)
				assert.Empty(t, validation.IsDNS1123Label(prefix+"-exec-2147483647"))
				assert.True(t, strings.HasSuffix(prefix, "-"+strings.TrimPrefix(sub.AppID, "spark-")[:8]), "%s carries the attempt's id %s", prefix, sub.AppID)
				assert.False(t, prefixes[prefix], "attempt %d reuses %s", attempt, prefix)
				prefixes[prefix] = true
			}
		})
	}
	assert.Equal(t, "pi-"+strings.TrimPrefix(testSub.AppID, "spark-")[:8],
		sparkProps(t, build(t, newApp(), Options{}))["spark.kubernetes.executor.podNamePrefix"])

	// A prefix in sparkConf is the user's.
	objs := build(t, newApp(withConf("spark.kubernetes.executor.podNamePrefix", "mine")), Options{})
	assert.Equal(t, "mine", sparkProps(t, objs)["spark.kubernetes.executor.podNamePrefix"])
}

var (
	appIDPattern = regexp.MustCompile(`^spark-[0-9a-f]{32}$`)
	// An RFC 9562 UUID of version 5 and the RFC variant.
	uuidPattern = regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-5[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
)

func TestNewSubmission(t *testing.T) {
	seeds := []types.UID{"3f7b1c2e-uid", "3f7b1c2e-uid/abcdef", "", "other"}
	seen := map[string]bool{}
	for _, seed := range seeds {
		for attempt := int32(0); attempt <= 3; attempt++ {
			s := NewSubmission(seed, attempt)
			assert.Equal(t, s, NewSubmission(seed, attempt), "deterministic")
			assert.Equal(t, attempt, s.Attempt)
			assert.Regexp(t, appIDPattern, s.AppID)
			assert.Empty(t, validation.IsValidLabelValue(s.AppID))
			assert.Regexp(t, uuidPattern, s.SubmissionID)
			assert.Empty(t, validation.IsValidLabelValue(s.SubmissionID))
			assert.False(t, seen[s.AppID], "app id %s repeats", s.AppID)
			assert.False(t, seen[s.SubmissionID], "submission id %s repeats", s.SubmissionID)
			seen[s.AppID], seen[s.SubmissionID] = true, true
		}
	}
	// Seed and attempt are separated: seed "a1" attempt 1 is not seed "a" attempt 11.
	assert.NotEqual(t, NewSubmission("a1", 1).AppID, NewSubmission("a", 11).AppID)
}

func TestFormatUUID(t *testing.T) {
	got := formatUUID([]byte{0, 1, 2, 3, 4, 5, 0xff, 7, 0xff, 9, 10, 11, 12, 13, 14, 15})
	assert.Equal(t, "00010203-0405-5f07-bf09-0a0b0c0d0e0f", got)
}
