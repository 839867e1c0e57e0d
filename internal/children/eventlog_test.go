package children

import (
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"

	"github.com/sparkhooks/sparkhooks/internal/api/v1beta2"
)

func eventLogKeys(props map[string]string) map[string]string {
	out := map[string]string{}
	for _, k := range keysWithPrefix(props, "spark.eventLog.") {
		out[k] = props[k]
	}
	return out
}

func TestEventLogProperties(t *testing.T) {
	const dir = "s3a://spark-logs.example.com/events"
	defaulted := map[string]string{
		"spark.eventLog.enabled":             "true",
		"spark.eventLog.dir":                 dir,
		"spark.eventLog.compress":            "true",
		"spark.eventLog.rolling.enabled":     "true",
		"spark.eventLog.rolling.maxFileSize": "128m",
	}
	with := func(kv ...string) map[string]string {
		out := map[string]string{}
		for k, v := range defaulted {
			out[k] = v
		}
		for i := 0; i+1 < len(kv); i += 2 {
			out[kv[i]] = kv[i+1]
		}
		return out
	}
	for _, tc := range []struct {
		name        string
		app         *v1beta2.SparkApplication
		dir         string
		want        map[string]string
		wantDefault bool
	}{
		{name: "no default", app: newApp(), want: map[string]string{}},
		{name: "no default, the application's own", app: newApp(withConf("spark.eventLog.enabled", "true")), want: map[string]string{"spark.eventLog.enabled": "true"}},
		{name: "defaulted", app: newApp(), dir: dir, want: defaulted, wantDefault: true},
		{name: "python", app: newApp(pythonApp), dir: dir, want: defaulted, wantDefault: true},
		{name: "spark 2 has no rolling files", app: newApp(withVersion("2.4.8")), dir: dir, wantDefault: true,
			want: map[string]string{"spark.eventLog.enabled": "true", "spark.eventLog.dir": dir, "spark.eventLog.compress": "true"}},
		{name: "the application's key wins, the others are defaulted", app: newApp(withConf("spark.eventLog.compress", "false", "spark.eventLog.rolling.maxFileSize", "64m")), dir: dir,
			want: with("spark.eventLog.compress", "false", "spark.eventLog.rolling.maxFileSize", "64m"), wantDefault: true},
		{name: "enabled without a dir gets the default dir", app: newApp(withConf("spark.eventLog.enabled", "TRUE")), dir: dir,
			want: with("spark.eventLog.enabled", "TRUE"), wantDefault: true},
		{name: "its own dir", app: newApp(withConf("spark.eventLog.dir", "hdfs://nn.example.com/logs")), dir: dir,
			want: with("spark.eventLog.dir", "hdfs://nn.example.com/logs")},
		{name: "turned off stays off", app: newApp(withConf("spark.eventLog.enabled", "false")), dir: dir,
			want: map[string]string{"spark.eventLog.enabled": "false"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := build(t, tc.app, Options{EventLog: EventLog{Dir: tc.dir}})
			assert.Equal(t, tc.want, eventLogKeys(sparkProps(t, objs)))
			assert.Equal(t, tc.wantDefault, objs.DefaultEventLog)
		})
	}
}

func TestEventLogVolume(t *testing.T) {
	claim := &corev1.Volume{Name: "ignored", VolumeSource: corev1.VolumeSource{
		PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "spark-events"}}}
	opts := Options{EventLog: EventLog{Dir: "file:/spark-events/", Volume: claim}}
	for _, tc := range []struct {
		name      string
		app       *v1beta2.SparkApplication
		wantMount bool
	}{
		{name: "defaulted", app: newApp(), wantMount: true},
		{name: "its own dir", app: newApp(withConf("spark.eventLog.dir", "file:/tmp/mine"))},
		{name: "turned off", app: newApp(withConf("spark.eventLog.enabled", "false"))},
	} {
		t.Run(tc.name, func(t *testing.T) {
			objs := build(t, tc.app, opts)
			pod := objs.DriverPod
			vol := findVolume(pod.Spec.Volumes, EventLogVolumeName)
			mount := findMount(driverContainer(t, objs).VolumeMounts, EventLogVolumeName)
			if !tc.wantMount {
				assert.Nil(t, vol)
				assert.Nil(t, mount)
				return
			}
			require.NotNil(t, vol)
			require.NotNil(t, mount)
			assert.Equal(t, "spark-events", vol.PersistentVolumeClaim.ClaimName)
			assert.Equal(t, "/spark-events", mount.MountPath)
			assert.Equal(t, "ignored", claim.Name, "the operator's volume is not changed")
			assert.Nil(t, findVolume(executorTemplatePod(t, objs).Spec.Volumes, EventLogVolumeName), "executors write no event log")
		})
	}
}

func TestEventLogValidate(t *testing.T) {
	pvc := &corev1.Volume{VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "logs"}}}
	emptyDir := &corev1.Volume{VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}}
	for _, tc := range []struct {
		name    string
		e       EventLog
		wantErr bool
	}{
		{name: "none", e: EventLog{}},
		{name: "object store", e: EventLog{Dir: "s3a://bucket/events"}},
		{name: "claim", e: EventLog{Dir: "file:/spark-events", Volume: pvc}},
		{name: "claim, three slashes", e: EventLog{Dir: "file:///spark-events", Volume: pvc}},
		{name: "volume without a dir", e: EventLog{Volume: pvc}, wantErr: true},
		{name: "path without a scheme", e: EventLog{Dir: "/spark-events"}, wantErr: true},
		{name: "local dir without its volume", e: EventLog{Dir: "file:/spark-events"}, wantErr: true},
		{name: "path without a scheme on a volume", e: EventLog{Dir: "/spark-events", Volume: pvc}, wantErr: true},
		{name: "object store on a volume", e: EventLog{Dir: "s3a://bucket/events", Volume: pvc}, wantErr: true},
		{name: "the root", e: EventLog{Dir: "file:/", Volume: pvc}, wantErr: true},
		{name: "a volume each pod has its own of", e: EventLog{Dir: "file:/spark-events", Volume: emptyDir}, wantErr: true},
		{name: "unparseable", e: EventLog{Dir: "s3a://bucket/%zz"}, wantErr: true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			err := tc.e.Validate()
			if tc.wantErr {
				assert.Error(t, err)
			} else {
				assert.NoError(t, err)
			}
		})
	}
}
