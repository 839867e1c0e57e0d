package v1beta2

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
	corev1 "k8s.io/api/core/v1"
	"k8s.io/apimachinery/pkg/api/resource"
	"k8s.io/apimachinery/pkg/util/validation/field"
)

func TestConfVolumes(t *testing.T) {
	const d = DriverVolumesPrefix
	gi := resource.MustParse("1G")
	directory := corev1.HostPathDirectory
	tests := []struct {
		name    string
		conf    map[string]string
		volumes []corev1.Volume
		mounts  []corev1.VolumeMount
		errs    []string // parts of the error messages, in order
	}{
		{name: "none", conf: map[string]string{"spark.executor.memory": "1g"}},
		{
			name: "Spark's VolumeSuite: a memory emptyDir and a disk emptyDir",
			conf: map[string]string{
				d + "emptyDir.data.mount.path": "/data", d + "emptyDir.data.options.medium": "Memory", d + "emptyDir.data.options.sizeLimit": "1G",
				d + "emptyDir.scratch.mount.path": "/scratch",
			},
			volumes: []corev1.Volume{
				{Name: "data", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{Medium: corev1.StorageMediumMemory, SizeLimit: &gi}}},
				{Name: "scratch", VolumeSource: corev1.VolumeSource{EmptyDir: &corev1.EmptyDirVolumeSource{}}},
			},
			mounts: []corev1.VolumeMount{{Name: "data", MountPath: "/data"}, {Name: "scratch", MountPath: "/scratch"}},
		},
		{
			name: "hostPath, nfs and an existing claim, with mount options",
			conf: map[string]string{
				d + "hostPath.logs.mount.path": "/logs", d + "hostPath.logs.options.path": "/var/log/spark", d + "hostPath.logs.options.type": "Directory",
				d + "nfs.shared.mount.path": "/shared", d + "nfs.shared.mount.readOnly": "true", d + "nfs.shared.options.server": "nfs.example.com", d + "nfs.shared.options.path": "/exports",
				d + "persistentVolumeClaim.pv.mount.path": "/opt/spark/pv-tests", d + "persistentVolumeClaim.pv.mount.subPath": "run-1",
				d + "persistentVolumeClaim.pv.options.claimName": "test-local-pvc",
			},
			volumes: []corev1.Volume{
				{Name: "logs", VolumeSource: corev1.VolumeSource{HostPath: &corev1.HostPathVolumeSource{Path: "/var/log/spark", Type: &directory}}},
				{Name: "shared", VolumeSource: corev1.VolumeSource{NFS: &corev1.NFSVolumeSource{Server: "nfs.example.com", Path: "/exports"}}},
				{Name: "pv", VolumeSource: corev1.VolumeSource{PersistentVolumeClaim: &corev1.PersistentVolumeClaimVolumeSource{ClaimName: "test-local-pvc"}}},
			},
			mounts: []corev1.VolumeMount{
				{Name: "logs", MountPath: "/logs"},
				{Name: "shared", MountPath: "/shared", ReadOnly: true},
				{Name: "pv", MountPath: "/opt/spark/pv-tests", SubPath: "run-1"},
			},
		},
		{
			name: "what cannot be built",
			conf: map[string]string{
				d + "persistentVolumeClaim.data.mount.path": "/data", d + "persistentVolumeClaim.data.options.claimName": "OnDemand",
				d + "configMap.conf.mount.path":       "/conf",
				d + "emptyDir.nomount.options.medium": "Memory",
				d + "emptyDir.big.mount.path":         "/big", d + "emptyDir.big.options.sizeLimit": "lots",
				d + "emptyDir.short": "x",
			},
			errs: []string{
				`expected spark.kubernetes.driver.volumes.<type>.<name>.mount`,
				`unknown volume type "configMap"`,
				`options.sizeLimit "lots" is not a quantity`,
				`every volume in spark.kubernetes.driver.volumes. needs a mount path`,
				`claim "OnDemand" asks Spark to create a claim per pod`,
			},
		},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			volumes, mounts, errs := ConfVolumes(tc.conf, DriverVolumesPrefix, field.NewPath("spec", "sparkConf"))
			assert.Equal(t, tc.volumes, volumes)
			assert.Equal(t, tc.mounts, mounts)
			require.Len(t, errs, len(tc.errs), "%v", errs)
			for i, want := range tc.errs {
				assert.Contains(t, errs[i].Error(), want)
				assert.True(t, strings.HasPrefix(errs[i].Field, "spec.sparkConf["), errs[i].Field)
			}
		})
	}
}

// A driver volume in Spark's properties and one in spec.volumes may not share a name, as Spark
// refuses duplicate volume names.
func TestValidateConfVolumeNameClash(t *testing.T) {
	app := validApp()
	app.Spec.SparkConf = map[string]string{DriverVolumesPrefix + "emptyDir.data.mount.path": "/scratch"}
	errs := ValidateSparkApplication(app)
	require.Len(t, errs, 1)
	assert.Contains(t, errs[0].Error(), "is also a volume in spec.volumes")

	app.Spec.SparkConf = map[string]string{DriverVolumesPrefix + "emptyDir.scratch.mount.path": "/scratch",
		DriverVolumesPrefix + "emptyDir.scratch.options.medium": "Memory"}
	assert.Empty(t, ValidateSparkApplication(app))
}
