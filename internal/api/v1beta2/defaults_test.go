package v1beta2

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"k8s.io/utils/ptr"
)

func TestSetSparkApplicationDefaults(t *testing.T) {
	// filled is what the defaults add to an otherwise empty spec.
	filled := func(mutate func(*SparkApplicationSpec)) SparkApplicationSpec {
		s := SparkApplicationSpec{
			Type:                 SparkApplicationTypeScala,
			Mode:                 DeployModeCluster,
			RestartPolicy:        RestartPolicy{Type: RestartPolicyNever},
			Driver:               DriverSpec{SparkPodSpec: SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("1g")}},
			Executor:             ExecutorSpec{SparkPodSpec: SparkPodSpec{Cores: ptr.To[int32](1), Memory: ptr.To("1g")}, Instances: ptr.To[int32](1)},
			ResourceRetainPolicy: ptr.To(ResourceRetainPolicyAlways),
		}
		if mutate != nil {
			mutate(&s)
		}
		return s
	}
	tests := []struct {
		name string
		in   func(*SparkApplicationSpec)
		want SparkApplicationSpec
	}{
		{
			name: "empty spec gets Kubeflow's defaults and ours",
			want: filled(nil),
		},
		{
			name: "set fields are kept",
			in: func(s *SparkApplicationSpec) {
				s.Driver.Cores = ptr.To[int32](4)
				s.Executor.Memory = ptr.To("8g")
				s.Executor.Instances = ptr.To[int32](10)
				s.ResourceRetainPolicy = ptr.To(ResourceRetainPolicyNever)
			},
			want: filled(func(s *SparkApplicationSpec) {
				s.Driver.Cores = ptr.To[int32](4)
				s.Executor.Memory = ptr.To("8g")
				s.Executor.Instances = ptr.To[int32](10)
				s.ResourceRetainPolicy = ptr.To(ResourceRetainPolicyNever)
			}),
		},
		{
			name: "sparkConf entries keep typed defaults away, since typed fields would win over them",
			in: func(s *SparkApplicationSpec) {
				s.SparkConf = map[string]string{
					"spark.driver.cores": "2", "spark.driver.memory": "2g",
					"spark.executor.cores": "3", "spark.executor.memory": "3g", "spark.executor.instances": "5",
				}
			},
			want: filled(func(s *SparkApplicationSpec) {
				s.SparkConf = map[string]string{
					"spark.driver.cores": "2", "spark.driver.memory": "2g",
					"spark.executor.cores": "3", "spark.executor.memory": "3g", "spark.executor.instances": "5",
				}
				s.Driver.Cores, s.Driver.Memory = nil, nil
				s.Executor.Cores, s.Executor.Memory, s.Executor.Instances = nil, nil, nil
			}),
		},
		{
			name: "OnFailure gets 5 s retry intervals",
			in: func(s *SparkApplicationSpec) {
				s.RestartPolicy = RestartPolicy{Type: RestartPolicyOnFailure, OnFailureRetries: ptr.To[int32](3)}
			},
			want: filled(func(s *SparkApplicationSpec) {
				s.RestartPolicy = RestartPolicy{
					Type: RestartPolicyOnFailure, OnFailureRetries: ptr.To[int32](3),
					OnFailureRetryInterval: ptr.To[int64](5), OnSubmissionFailureRetryInterval: ptr.To[int64](5),
				}
			}),
		},
		{
			name: "Always gets 5 s retry intervals but keeps a set one",
			in: func(s *SparkApplicationSpec) {
				s.RestartPolicy = RestartPolicy{Type: RestartPolicyAlways, OnFailureRetryInterval: ptr.To[int64](60)}
			},
			want: filled(func(s *SparkApplicationSpec) {
				s.RestartPolicy = RestartPolicy{
					Type: RestartPolicyAlways, OnFailureRetryInterval: ptr.To[int64](60),
					OnSubmissionFailureRetryInterval: ptr.To[int64](5),
				}
			}),
		},
		{
			name: "Never gets no retry intervals",
			in: func(s *SparkApplicationSpec) {
				s.RestartPolicy = RestartPolicy{Type: RestartPolicyNever}
			},
			want: filled(nil),
		},
		{
			name: "dynamic allocation: no default instances, shuffle tracking on",
			in: func(s *SparkApplicationSpec) {
				s.DynamicAllocation = &DynamicAllocation{Enabled: true, MaxExecutors: ptr.To[int32](10)}
			},
			want: filled(func(s *SparkApplicationSpec) {
				s.DynamicAllocation = &DynamicAllocation{Enabled: true, MaxExecutors: ptr.To[int32](10), ShuffleTrackingEnabled: ptr.To(true)}
				s.Executor.Instances = nil
			}),
		},
		{
			name: "dynamic allocation through sparkConf (correct key) also skips default instances",
			in: func(s *SparkApplicationSpec) {
				s.SparkConf = map[string]string{"spark.dynamicAllocation.enabled": "True"}
			},
			want: filled(func(s *SparkApplicationSpec) {
				s.SparkConf = map[string]string{"spark.dynamicAllocation.enabled": "True"}
				s.Executor.Instances = nil
			}),
		},
		{
			name: "disabled dynamic allocation is left alone",
			in: func(s *SparkApplicationSpec) {
				s.DynamicAllocation = &DynamicAllocation{Enabled: false}
			},
			want: filled(func(s *SparkApplicationSpec) {
				s.DynamicAllocation = &DynamicAllocation{Enabled: false}
			}),
		},
		{
			name: "explicit shuffle tracking false is kept",
			in: func(s *SparkApplicationSpec) {
				s.DynamicAllocation = &DynamicAllocation{Enabled: true, ShuffleTrackingEnabled: ptr.To(false)}
			},
			want: filled(func(s *SparkApplicationSpec) {
				s.DynamicAllocation = &DynamicAllocation{Enabled: true, ShuffleTrackingEnabled: ptr.To(false)}
				s.Executor.Instances = nil
			}),
		},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			app := &SparkApplication{Spec: SparkApplicationSpec{Type: SparkApplicationTypeScala}}
			if tt.in != nil {
				tt.in(&app.Spec)
			}
			SetSparkApplicationDefaults(app)
			assert.Equal(t, tt.want, app.Spec)

			again := app.DeepCopy()
			SetSparkApplicationDefaults(again)
			assert.Equal(t, app, again, "defaulting twice changes nothing")
		})
	}
}

func TestSetSparkApplicationDefaultsLeavesTypeAlone(t *testing.T) {
	// type is required by the schema; defaulting it would hide a missing value from validation.
	app := &SparkApplication{}
	SetSparkApplicationDefaults(app)
	assert.Empty(t, app.Spec.Type)
	SetSparkApplicationDefaults(nil)
}

func TestSetScheduledSparkApplicationDefaults(t *testing.T) {
	ssa := &ScheduledSparkApplication{Spec: ScheduledSparkApplicationSpec{
		Schedule: "@hourly",
		Template: SparkApplicationSpec{Type: SparkApplicationTypePython},
	}}
	SetScheduledSparkApplicationDefaults(ssa)
	assert.Equal(t, ConcurrencyAllow, ssa.Spec.ConcurrencyPolicy)
	assert.Equal(t, ptr.To[int32](1), ssa.Spec.SuccessfulRunHistoryLimit)
	assert.Equal(t, ptr.To[int32](1), ssa.Spec.FailedRunHistoryLimit)
	assert.Equal(t, DeployModeCluster, ssa.Spec.Template.Mode, "the template is defaulted too")

	kept := &ScheduledSparkApplication{Spec: ScheduledSparkApplicationSpec{
		ConcurrencyPolicy:         ConcurrencyForbid,
		SuccessfulRunHistoryLimit: ptr.To[int32](0),
		FailedRunHistoryLimit:     ptr.To[int32](5),
	}}
	SetScheduledSparkApplicationDefaults(kept)
	assert.Equal(t, ConcurrencyForbid, kept.Spec.ConcurrencyPolicy)
	assert.Equal(t, ptr.To[int32](0), kept.Spec.SuccessfulRunHistoryLimit)
	assert.Equal(t, ptr.To[int32](5), kept.Spec.FailedRunHistoryLimit)
	SetScheduledSparkApplicationDefaults(nil)
}
