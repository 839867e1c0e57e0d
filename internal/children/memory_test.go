package children

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/utils/ptr"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

var (
	spark32 = sparkVersion{3, 2}
	spark33 = sparkVersion{3, 3}
	spark35 = sparkVersion{3, 5}
	spark40 = sparkVersion{4, 0}
	spark24 = sparkVersion{2, 4}
)

// The worked examples of spark-pod.md §2.2, and the rule's version differences.
func TestContainerMemoryMiB(t *testing.T) {
	withFactor := func(factor string, kv ...string) properties {
		p := properties{"spark.kubernetes.memoryOverheadFactor": factor}
		for i := 0; i+1 < len(kv); i += 2 {
			p[kv[i]] = kv[i+1]
		}
		return p
	}
	// The builder always writes spark.kubernetes.memoryOverheadFactor: 0.1, or 0.4 for Python and R.
	jvm := func(kv ...string) properties { return withFactor(jvmOverheadFactor, kv...) }
	python := func(kv ...string) properties { return withFactor(nonJVMOverheadFactor, kv...) }
	tests := []struct {
		name    string
		conf    properties
		role    string
		version sparkVersion
		want    int64
	}{
		{"JVM 1g: 1024 + max(102, 384)", jvm("spark.driver.memory", "1g"), "driver", spark35, 1408},
		{"JVM default heap is 1g", jvm(), "driver", spark35, 1408},
		{"JVM 4g truncates 409.6 to 409", jvm("spark.driver.memory", "4g"), "driver", spark35, 4505},
		{"JVM 10g", jvm("spark.driver.memory", "10g"), "driver", spark35, 10240 + 1024},
		{"JVM 2g still at the 384 floor", jvm("spark.driver.memory", "2g"), "driver", spark35, 2048 + 384},
		{"JVM 3840m: 384 exactly", jvm("spark.driver.memory", "3840m"), "driver", spark35, 3840 + 384},
		{"JVM 3850m: 385 over the floor", jvm("spark.driver.memory", "3850m"), "driver", spark35, 3850 + 385},
		{"heap without unit is MiB", jvm("spark.driver.memory", "2048"), "driver", spark35, 2048 + 384},
		{"heap in k rounds down to MiB", jvm("spark.driver.memory", "1572864k"), "driver", spark35, 1536 + 384},
		{"Python 1g: factor 0.4", python("spark.driver.memory", "1g"), "driver", spark35, 1433},
		{"Python 4g", python("spark.driver.memory", "4g"), "driver", spark35, 4096 + 1638},
		{"memoryOverhead 512m with 1g", jvm("spark.driver.memory", "1g", "spark.driver.memoryOverhead", "512m"), "driver", spark35, 1536},
		{"memoryOverhead below the floor is taken as is", jvm("spark.driver.memory", "1g", "spark.driver.memoryOverhead", "100m"), "driver", spark35, 1124},
		{"memoryOverhead wins over the factors", jvm("spark.driver.memory", "4g", "spark.driver.memoryOverhead", "1g", "spark.driver.memoryOverheadFactor", "0.5"), "driver", spark35, 5120},
		{"memoryOverhead without unit is MiB", jvm("spark.driver.memory", "1g", "spark.driver.memoryOverhead", "256"), "driver", spark35, 1280},
		{"spark.kubernetes.memoryOverheadFactor 0.2", jvm("spark.driver.memory", "4g", "spark.kubernetes.memoryOverheadFactor", "0.2"), "driver", spark35, 4096 + 819},
		{"driver factor on 3.3", jvm("spark.driver.memory", "4g", "spark.driver.memoryOverheadFactor", "0.2"), "driver", spark33, 4096 + 819},
		{"driver factor on 4.0", jvm("spark.driver.memory", "4g", "spark.driver.memoryOverheadFactor", "0.2"), "driver", spark40, 4096 + 819},
		{"driver factor ignored on 3.2", jvm("spark.driver.memory", "4g", "spark.driver.memoryOverheadFactor", "0.2"), "driver", spark32, 4505},
		{"driver factor ignored on 2.4", jvm("spark.driver.memory", "4g", "spark.driver.memoryOverheadFactor", "0.2"), "driver", spark24, 4505},
		{"driver factor over a Python default on 3.5", python("spark.driver.memory", "4g", "spark.driver.memoryOverheadFactor", "0.1"), "driver", spark35, 4505},
		{"executor factor does not apply to the driver", jvm("spark.driver.memory", "4g", "spark.executor.memoryOverheadFactor", "0.5"), "driver", spark35, 4505},
		{"minMemoryOverhead honoured on 4.0", jvm("spark.driver.memory", "1g", "spark.driver.minMemoryOverhead", "1g"), "driver", spark40, 2048},
		{"minMemoryOverhead without unit on 4.0", jvm("spark.driver.memory", "1g", "spark.driver.minMemoryOverhead", "500"), "driver", spark40, 1524},
		{"minMemoryOverhead lowers the floor on 4.0", jvm("spark.driver.memory", "1g", "spark.driver.minMemoryOverhead", "100m"), "driver", spark40, 1024 + 102},
		{"minMemoryOverhead ignored on 3.5", jvm("spark.driver.memory", "1g", "spark.driver.minMemoryOverhead", "1g"), "driver", spark35, 1408},
		{"4.0 default floor is 384", jvm("spark.driver.memory", "1g"), "driver", spark40, 1408},
		{"executor role reads executor keys", jvm("spark.executor.memory", "2g", "spark.driver.memory", "8g"), "executor", spark35, 2048 + 384},
		{"executor memoryOverhead", jvm("spark.executor.memory", "2g", "spark.executor.memoryOverhead", "1g"), "executor", spark35, 3072},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := containerMemoryMiB(tt.conf, tt.role, tt.version)
			require.NoError(t, err)
			assert.Equal(t, tt.want, got)
		})
	}
}

func TestContainerMemoryMiBErrors(t *testing.T) {
	tests := []struct {
		name    string
		conf    properties
		version sparkVersion
		wantErr string
	}{
		{"bad heap", properties{"spark.kubernetes.memoryOverheadFactor": "0.1", "spark.driver.memory": "1.5g"}, spark35, "spark.driver.memory"},
		{"bad overhead", properties{"spark.kubernetes.memoryOverheadFactor": "0.1", "spark.driver.memoryOverhead": "lots"}, spark35, "spark.driver.memoryOverhead"},
		{"bad factor", properties{"spark.kubernetes.memoryOverheadFactor": "ten percent"}, spark35, "spark.kubernetes.memoryOverheadFactor"},
		{"bad driver factor on 3.3", properties{"spark.kubernetes.memoryOverheadFactor": "0.1", "spark.driver.memoryOverheadFactor": "x"}, spark33, "spark.driver.memoryOverheadFactor"},
		{"bad minimum on 4.0", properties{"spark.kubernetes.memoryOverheadFactor": "0.1", "spark.driver.minMemoryOverhead": "x"}, spark40, "spark.driver.minMemoryOverhead"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := containerMemoryMiB(tt.conf, "driver", tt.version)
			require.Error(t, err)
			assert.Contains(t, err.Error(), tt.wantErr)
		})
	}
	// What is ignored on a version cannot break it.
	got, err := containerMemoryMiB(properties{"spark.kubernetes.memoryOverheadFactor": "0.1", "spark.driver.memoryOverheadFactor": "x", "spark.driver.minMemoryOverhead": "x"}, "driver", spark32)
	require.NoError(t, err)
	assert.Equal(t, int64(1408), got)
}

// The built driver Pod carries the rule's result as request and limit, in Mi.
func TestDriverPodMemory(t *testing.T) {
	tests := []struct {
		name        string
		app         *v1beta2.SparkApplication
		wantRequest string
		wantLimit   string
	}{
		{"JVM default 1g", newApp(), "1408Mi", "1408Mi"},
		{"JVM 4g", newApp(func(a *v1beta2.SparkApplication) { a.Spec.Driver.Memory = ptr.To("4g") }), "4505Mi", "4505Mi"},
		{"Python 1g", newApp(pythonApp), "1433Mi", "1433Mi"},
		{"R 1g is non-JVM too", newApp(func(a *v1beta2.SparkApplication) {
			a.Spec.Type = v1beta2.SparkApplicationTypeR
			a.Spec.MainClass = nil
			a.Spec.MainApplicationFile = ptr.To(testRFile)
		}), "1433Mi", "1433Mi"},
		{"spec.memoryOverheadFactor on Python", newApp(pythonApp, func(a *v1beta2.SparkApplication) {
			a.Spec.MemoryOverheadFactor = ptr.To("0.1")
			a.Spec.Driver.Memory = ptr.To("4g")
		}), "4505Mi", "4505Mi"},
		{"spec.driver.memoryOverhead", newApp(func(a *v1beta2.SparkApplication) { a.Spec.Driver.MemoryOverhead = ptr.To("512m") }), "1536Mi", "1536Mi"},
		{"spark.driver.memoryOverheadFactor on 3.5", newApp(withConf("spark.driver.memoryOverheadFactor", "0.2"), func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.Memory = ptr.To("4g")
		}), "4915Mi", "4915Mi"},
		{"spark.driver.memoryOverheadFactor ignored on 3.2", newApp(withVersion("3.2.4"), withConf("spark.driver.memoryOverheadFactor", "0.2"), func(a *v1beta2.SparkApplication) {
			a.Spec.Driver.Memory = ptr.To("4g")
		}), "4505Mi", "4505Mi"},
		{"spark.driver.minMemoryOverhead on 4.0", newApp(withVersion("4.0.1"), withConf("spark.driver.minMemoryOverhead", "1g")), "2048Mi", "2048Mi"},
		{"spark.driver.minMemoryOverhead ignored on 3.5", newApp(withConf("spark.driver.minMemoryOverhead", "1g")), "1408Mi", "1408Mi"},
		{"memoryLimit raises only the limit", newApp(func(a *v1beta2.SparkApplication) { a.Spec.Driver.MemoryLimit = ptr.To("3g") }), "1408Mi", "3Gi"},
		{"memoryLimit as a Kubernetes quantity", newApp(func(a *v1beta2.SparkApplication) { a.Spec.Driver.MemoryLimit = ptr.To("2500Mi") }), "1408Mi", "2500Mi"},
		{"executor memoryLimit leaves the driver alone", newApp(func(a *v1beta2.SparkApplication) { a.Spec.Executor.MemoryLimit = ptr.To("8g") }), "1408Mi", "1408Mi"},
		{"heap from sparkConf when the typed field is unset", newApp(withConf("spark.driver.memory", "2g")), "2432Mi", "2432Mi"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			objs := build(t, tt.app, Options{})
			res := driverContainer(t, objs).Resources
			req, lim := res.Requests[corev1.ResourceMemory], res.Limits[corev1.ResourceMemory]
			// Compared as quantities: "2048Mi" is serialised in its canonical form "2Gi", as the
			// API server would store Spark's own "2048Mi".
			assert.Zero(t, req.Cmp(resource.MustParse(tt.wantRequest)), "request %s, want %s", req.String(), tt.wantRequest)
			assert.Zero(t, lim.Cmp(resource.MustParse(tt.wantLimit)), "limit %s, want %s", lim.String(), tt.wantLimit)
		})
	}
}

// The builder writes the factor Spark's BasicDriverFeatureStep writes, for executors to read.
func TestMemoryOverheadFactorProperty(t *testing.T) {
	assert.Equal(t, "0.1", sparkProps(t, build(t, newApp(), Options{}))["spark.kubernetes.memoryOverheadFactor"])
	assert.Equal(t, "0.4", sparkProps(t, build(t, newApp(pythonApp), Options{}))["spark.kubernetes.memoryOverheadFactor"])
	assert.Equal(t, "0.25", sparkProps(t, build(t, newApp(pythonApp, func(a *v1beta2.SparkApplication) {
		a.Spec.MemoryOverheadFactor = ptr.To("0.25")
	}), Options{}))["spark.kubernetes.memoryOverheadFactor"])
}
