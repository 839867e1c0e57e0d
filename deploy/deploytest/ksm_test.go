package deploytest

import (
	"fmt"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	apiextensionsv1 "k8s.io/apiextensions-apiserver/pkg/apis/apiextensions/v1"
	"sigs.k8s.io/yaml"
)

// ksmConfig mirrors kube-state-metrics' custom-resource-state configuration
// (pkg/customresourcestate: Metrics, Resource, Generator, Metric and the three metric types), so
// that strict decoding catches a key kube-state-metrics would ignore.
type ksmConfig struct {
	// Kind is not read by kube-state-metrics but conventionally names the document.
	Kind string `json:"kind"`
	Spec struct {
		Resources []ksmResource `json:"resources"`
	} `json:"spec"`
}

type ksmLabels struct {
	CommonLabels   map[string]string   `json:"commonLabels,omitempty"`
	LabelsFromPath map[string][]string `json:"labelsFromPath,omitempty"`
}

type ksmResource struct {
	ksmLabels        `json:",inline"`
	MetricNamePrefix *string `json:"metricNamePrefix"`
	GroupVersionKind struct {
		Group   string `json:"group"`
		Version string `json:"version"`
		Kind    string `json:"kind"`
	} `json:"groupVersionKind"`
	ResourcePlural string         `json:"resourcePlural,omitempty"`
	Metrics        []ksmGenerator `json:"metrics"`
	ErrorLogV      int            `json:"errorLogV,omitempty"`
}

type ksmGenerator struct {
	ksmLabels `json:",inline"`
	Name      string    `json:"name"`
	Help      string    `json:"help"`
	Each      ksmMetric `json:"each"`
	ErrorLogV int       `json:"errorLogV,omitempty"`
}

type ksmMetric struct {
	Type  string `json:"type"`
	Gauge *struct {
		LabelFromKey   string              `json:"labelFromKey,omitempty"`
		LabelsFromPath map[string][]string `json:"labelsFromPath,omitempty"`
		Path           []string            `json:"path"`
		ValueFrom      []string            `json:"valueFrom,omitempty"`
		ValueType      string              `json:"valueType,omitempty"`
		NilIsZero      bool                `json:"nilIsZero,omitempty"`
	} `json:"gauge,omitempty"`
	StateSet *struct {
		LabelsFromPath map[string][]string `json:"labelsFromPath,omitempty"`
		Path           []string            `json:"path"`
		List           []string            `json:"list"`
		LabelName      string              `json:"labelName"`
		ValueFrom      []string            `json:"valueFrom,omitempty"`
	} `json:"stateSet,omitempty"`
	Info *struct {
		LabelFromKey   string              `json:"labelFromKey,omitempty"`
		LabelsFromPath map[string][]string `json:"labelsFromPath,omitempty"`
		Path           []string            `json:"path,omitempty"`
	} `json:"info,omitempty"`
}

const ksmConfigFile = "chart/files/kube-state-metrics-config.yaml"

func loadKSMConfig(t *testing.T) *ksmConfig {
	t.Helper()
	cfg := &ksmConfig{}
	path := filepath.Join(repoRoot(t), ksmConfigFile)
	require.NoError(t, yaml.UnmarshalStrict(readFile(t, path), cfg), path)
	return cfg
}

// ksmMetricNames lists the metric names the configuration makes kube-state-metrics export.
func ksmMetricNames(cfg *ksmConfig) []string {
	var names []string
	for _, r := range cfg.Spec.Resources {
		prefix := "kube_customresource"
		if r.MetricNamePrefix != nil {
			prefix = *r.MetricNamePrefix
		}
		for _, g := range r.Metrics {
			names = append(names, prefix+"_"+g.Name)
		}
	}
	return names
}

// schemaAt follows path through a CRD schema. Lists are entered through their items, maps through
// additionalProperties; below x-kubernetes-preserve-unknown-fields anything goes (nil, nil).
func schemaAt(s *apiextensionsv1.JSONSchemaProps, path []string) (*apiextensionsv1.JSONSchemaProps, error) {
	for i, seg := range path {
		if s.XPreserveUnknownFields != nil && *s.XPreserveUnknownFields {
			return nil, nil
		}
		if s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
			s = s.Items.Schema
		}
		next, ok := s.Properties[seg]
		switch {
		case ok:
			s = &next
		case s.AdditionalProperties != nil && s.AdditionalProperties.Schema != nil:
			s = s.AdditionalProperties.Schema
		default:
			return nil, fmt.Errorf("%s: no field %q", strings.Join(path[:i], "."), seg)
		}
	}
	return s, nil
}

// elementSchema is what paths relative to a metric's path resolve against: the elements when the
// path is a list.
func elementSchema(s *apiextensionsv1.JSONSchemaProps) *apiextensionsv1.JSONSchemaProps {
	if s != nil && s.Type == "array" && s.Items != nil && s.Items.Schema != nil {
		return s.Items.Schema
	}
	return s
}

// checkPath resolves path in schema; metadata is not part of CRD schemas and is left alone.
func checkPath(t *testing.T, schema *apiextensionsv1.JSONSchemaProps, where string, path []string) *apiextensionsv1.JSONSchemaProps {
	t.Helper()
	if len(path) > 0 && path[0] == "metadata" {
		assert.Contains(t, []string{"name", "namespace", "creationTimestamp", "labels", "annotations", "uid"}, path[len(path)-1], "%s: %v", where, path)
		return nil
	}
	s, err := schemaAt(schema, path)
	assert.NoError(t, err, where)
	return s
}

func checkRelativePaths(t *testing.T, base *apiextensionsv1.JSONSchemaProps, where string, labels map[string][]string, valueFrom []string) {
	t.Helper()
	if base == nil {
		return
	}
	elem := elementSchema(base)
	for label, p := range labels {
		if len(p) == 0 {
			continue
		}
		_, err := schemaAt(elem, p)
		assert.NoError(t, err, "%s label %s", where, label)
	}
	if len(valueFrom) > 0 {
		_, err := schemaAt(elem, valueFrom)
		assert.NoError(t, err, "%s valueFrom", where)
	}
}

func TestKubeStateMetricsConfigMatchesTheCRDs(t *testing.T) {
	cfg := loadKSMConfig(t)
	assert.Equal(t, "CustomResourceStateMetrics", cfg.Kind)

	var kinds []string
	for _, r := range cfg.Spec.Resources {
		gvk := r.GroupVersionKind
		kinds = append(kinds, gvk.Kind)
		t.Run(gvk.Kind, func(t *testing.T) {
			require.Contains(t, crdFiles, gvk.Kind, "no CRD of this repository has kind %s", gvk.Kind)
			crd := loadCRD(t, gvk.Kind)
			assert.Equal(t, crd.Spec.Group, gvk.Group)
			schema := crdVersionSchema(t, crd, gvk.Version)
			require.NotNil(t, r.MetricNamePrefix, "set metricNamePrefix: the default kube_customresource_ mixes every resource")

			for label, p := range r.LabelsFromPath {
				checkPath(t, schema, "resource label "+label, p)
			}
			seen := map[string]bool{}
			for _, g := range r.Metrics {
				where := gvk.Kind + " metric " + g.Name
				assert.False(t, seen[g.Name], "%s: defined twice", where)
				seen[g.Name] = true
				assert.NotEmpty(t, g.Help, where)
				for label, p := range g.LabelsFromPath {
					checkPath(t, schema, where+" label "+label, p)
				}
				m := g.Each
				set := 0
				switch {
				case m.Gauge != nil:
					set++
					assert.Equal(t, "Gauge", m.Type, where)
					base := checkPath(t, schema, where, m.Gauge.Path)
					checkRelativePaths(t, base, where, m.Gauge.LabelsFromPath, m.Gauge.ValueFrom)
				case m.StateSet != nil:
					set++
					assert.Equal(t, "StateSet", m.Type, where)
					assert.NotEmpty(t, m.StateSet.LabelName, where)
					assert.NotEmpty(t, m.StateSet.List, where)
					base := checkPath(t, schema, where, m.StateSet.Path)
					checkRelativePaths(t, base, where, m.StateSet.LabelsFromPath, m.StateSet.ValueFrom)
					// Where the CRD enumerates the values, the list must name each of them.
					if base != nil && len(base.Enum) > 0 {
						var enum []string
						for _, e := range base.Enum {
							var v string
							require.NoError(t, yaml.Unmarshal(e.Raw, &v))
							if v != "" {
								enum = append(enum, v)
							}
						}
						assert.ElementsMatch(t, enum, m.StateSet.List, where)
					}
				case m.Info != nil:
					set++
					assert.Equal(t, "Info", m.Type, where)
					base := schema
					if len(m.Info.Path) > 0 {
						base = checkPath(t, schema, where, m.Info.Path)
					}
					checkRelativePaths(t, base, where, m.Info.LabelsFromPath, nil)
				}
				assert.Equal(t, 1, set, "%s: exactly one of gauge, stateSet, info", where)
			}
		})
	}
	slices.Sort(kinds)
	assert.Equal(t, []string{"ScheduledSparkApplication", "SparkApplication", "SparkCluster", "SparkConnect"}, kinds, "every kind sparkhooks serves has metrics")
}

func TestSchemaAt(t *testing.T) {
	str := apiextensionsv1.JSONSchemaProps{Type: "string"}
	root := &apiextensionsv1.JSONSchemaProps{Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
		"status": {Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{
			"conditions": {Type: "array", Items: &apiextensionsv1.JSONSchemaPropsOrArray{Schema: &apiextensionsv1.JSONSchemaProps{
				Type: "object", Properties: map[string]apiextensionsv1.JSONSchemaProps{"type": str},
			}}},
			"executorState": {Type: "object", AdditionalProperties: &apiextensionsv1.JSONSchemaPropsOrBool{Schema: &str}},
			"free":          {Type: "object", XPreserveUnknownFields: ptr(true)},
		}},
	}}
	tests := []struct {
		path     []string
		wantType string
		wantErr  string
	}{
		{path: []string{"status", "conditions"}, wantType: "array"},
		{path: []string{"status", "conditions", "type"}, wantType: "string"},
		{path: []string{"status", "executorState", "exec-1"}, wantType: "string"},
		{path: []string{"status", "free", "anything"}},
		{path: []string{"status", "phase"}, wantErr: `status: no field "phase"`},
		{path: []string{"spec"}, wantErr: `: no field "spec"`},
	}
	for _, tt := range tests {
		t.Run(strings.Join(tt.path, "."), func(t *testing.T) {
			got, err := schemaAt(root, tt.path)
			if tt.wantErr != "" {
				require.Error(t, err)
				assert.Equal(t, tt.wantErr, err.Error())
				return
			}
			require.NoError(t, err)
			if tt.wantType == "" {
				assert.Nil(t, got, "below preserve-unknown-fields nothing is known")
				return
			}
			require.NotNil(t, got)
			assert.Equal(t, tt.wantType, got.Type)
		})
	}
}
